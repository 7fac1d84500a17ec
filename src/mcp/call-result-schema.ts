import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * What a server's answer to tools/call must be before anything reads it: MCP's
 * CallToolResult, the same shapes the SDK's client checks (its CallToolResultSchema), for
 * the calls the daemon sends itself (call-channel.ts). Extra properties are allowed, as
 * the SDK allows them; a content block of a type MCP does not define is refused, as the
 * SDK refuses it. Base64 data is not decoded here: nothing of it is ever read but its length.
 *
 * Only its type is imported at run time: the check is generated at build time
 * (scripts/validators.mjs, call-result-check.generated.js), so the daemon starts without TypeBox.
 */
const Meta = Type.Optional(Type.Object({}));
const Annotations = Type.Optional(
  Type.Object({
    audience: Type.Optional(Type.Array(Type.Union([Type.Literal('user'), Type.Literal('assistant')]))),
    priority: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    lastModified: Type.Optional(Type.String()),
  }),
);

/** A content block: the fields of its type, annotations and _meta. */
function block<T extends Record<string, TSchema>>(type: string, fields: T) {
  return Type.Object({ type: Type.Literal(type), ...fields, annotations: Annotations, _meta: Meta });
}

const ResourceFields = { uri: Type.String(), mimeType: Type.Optional(Type.String()), _meta: Meta };
const Icon = Type.Object({ src: Type.String(), mimeType: Type.Optional(Type.String()), sizes: Type.Optional(Type.Array(Type.String())) });

export const ContentBlock = Type.Union([
  block('text', { text: Type.String() }),
  block('image', { data: Type.String(), mimeType: Type.String() }),
  block('audio', { data: Type.String(), mimeType: Type.String() }),
  block('resource_link', {
    uri: Type.String(),
    name: Type.String(),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    mimeType: Type.Optional(Type.String()),
    size: Type.Optional(Type.Number()),
    icons: Type.Optional(Type.Array(Icon)),
  }),
  block('resource', {
    resource: Type.Union([Type.Object({ ...ResourceFields, text: Type.String() }), Type.Object({ ...ResourceFields, blob: Type.String() })]),
  }),
]);

export const CallResult = Type.Object({
  /** Absent means none (the SDK reads it so too). */
  content: Type.Optional(Type.Array(ContentBlock)),
  structuredContent: Type.Optional(Type.Object({})),
  isError: Type.Optional(Type.Boolean()),
  _meta: Meta,
});
export type CallResult = Static<typeof CallResult>;
