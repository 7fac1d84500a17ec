/** Tool pins: what a human reviews and accepts when a service's tools changed since they were trusted. */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { method, type MethodDef } from './define.js';
import { ToolWarning } from './shapes.js';

const ServiceId = Type.String({ minLength: 1, maxLength: 128 });
const Json = Type.Unknown({ description: 'A JSON value from the server: untrusted.' });

/** The parts of a tool that are pinned (and so reviewed): anything else the server sends is ignored. */
export const PinnedDefinition = Type.Object({
  name: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  inputSchema: Type.Object({}, { additionalProperties: true }),
  outputSchema: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  annotations: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
});
export type PinnedDefinition = Static<typeof PinnedDefinition>;

/** One leaf that differs between the pinned and the new definition; a side without the key has no before (after). */
export const FieldChange = Type.Object({
  path: Type.String({ description: 'A JSON pointer into the definition: /description, /inputSchema/properties/path/type, /annotations/destructiveHint...' }),
  before: Type.Optional(Json),
  after: Type.Optional(Json),
});
export type FieldChange = Static<typeof FieldChange>;

export const TextDiffPart = Type.Object({
  op: Type.Union([Type.Literal('same'), Type.Literal('removed'), Type.Literal('added')]),
  text: Type.String(),
});
export type TextDiffPart = Static<typeof TextDiffPart>;

export const HeldTool = Type.Object({
  name: Type.String({ description: 'The server\'s own tool name: untrusted text.' }),
  modelName: Type.String(),
  pin: Type.Union([Type.Literal('changed'), Type.Literal('added')]),
  digest: Type.String({ description: 'sha256 of the canonical new definition (its pin digest): give it back to tools.accept with the name.' }),
  pinnedDigest: Type.Union([Type.String(), Type.Null()], { description: 'The pin\'s digest; null for an added tool.' }),
  changes: Type.Array(FieldChange, { description: 'changed: every leaf that differs (empty for added).' }),
  descriptionDiff: Type.Union([Type.Array(TextDiffPart), Type.Null()], { description: 'changed with a new description: a word diff of the old and the new text; else null.' }),
  definition: PinnedDefinition,
  warnings: Type.Array(ToolWarning),
});
export type HeldTool = Static<typeof HeldTool>;

export const pinMethods = {
  'tools.review': method({
    summary:
      'The held tools of an active service (changed or added since its tools were pinned), each with what changed: every differing field of ' +
      'the definition, a word diff of the description, the new definition and warnings about hidden text. A page at a time (at most ' +
      `${LIMITS.maxPageBytes} bytes, at least one tool): pass nextCursor back as cursor. Accept with tools.accept at the toolListVersion shown.`,
    params: Type.Object({ serviceId: ServiceId, cursor: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,5})$' })) }, { additionalProperties: false }),
    result: Type.Object({
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      generation: Type.Integer(),
      toolListVersion: Type.Integer({ description: 'Give it to tools.accept: a newer list makes that request stale.' }),
      tools: Type.Array(HeldTool),
      nextCursor: Type.Union([Type.String(), Type.Null()]),
    }),
    errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_ACTIVE'],
  }),
  'tools.accept': method({
    summary:
      'Accept held tools, each named with the digest tools.review showed for it, at exactly the tool-list version reviewed: they are pinned as ' +
      'they are now and become callable and visible to models from the next task. A newer tool list, or a digest that is not the one of the ' +
      'definition held now (it changed since, e.g. across a daemon restart, where versions count from 1 again), makes the request ' +
      'APPROVAL_STALE and accepts nothing (review again). Held tools not named stay held.',
    params: Type.Object(
      {
        serviceId: ServiceId,
        toolListVersion: Type.Integer({ minimum: 1 }),
        tools: Type.Array(
          Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 1024 }),
              digest: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The digest tools.review showed for this tool: what the human saw.' }),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: LIMITS.maxToolsPerService, description: 'The held tools to accept, as reviewed.' },
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      toolListVersion: Type.Integer(),
      accepted: Type.Array(Type.String()),
      stillHeld: Type.Integer({ description: 'Held tools left (not named).' }),
    }),
    errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_ACTIVE', 'APPROVAL_STALE', 'TOOL_NOT_FOUND', 'STORAGE_FAILED'],
  }),
} as const satisfies Record<string, MethodDef>;
