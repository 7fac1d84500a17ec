import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../core/index.js';
import { PinnedDefinition } from '../core/wire/index.js';

/**
 * The schema of one service's pin file (tool-pins/<digest of the service id>.json). Only its
 * types are imported at run time: the check is generated at build time
 * (scripts/validators.mjs, pins-check.generated.js), so the daemon starts without TypeBox.
 */
const Digest = Type.String({ pattern: '^[0-9a-f]{64}$' });

export const PinDocument = Type.Object(
  {
    schemaVersion: Type.Literal(1),
    serviceId: Type.String({ minLength: 1, maxLength: 128 }),
    /** The command, args, cwd and url the pins were trusted with: another one is a new trust. */
    launchDigest: Digest,
    pinnedAt: Type.String(),
    tools: Type.Array(Type.Object({ digest: Digest, definition: PinnedDefinition }, { additionalProperties: false }), { maxItems: LIMITS.maxToolsPerService }),
  },
  { additionalProperties: false },
);
export type PinDocument = Static<typeof PinDocument>;
