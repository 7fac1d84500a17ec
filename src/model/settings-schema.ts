import { Type, type Static } from '@sinclair/typebox';

/* Only its types are imported at run time: the check is generated from it at build time
   (scripts/validators.mjs), so the daemon runs it without TypeBox or ajv's compiler. */

/** The `model` section of settings.json: model settings, and where the key is kept (never the key itself). Persisted: additive changes only. */
export const ModelSection = Type.Object(
  {
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
    deferToolsAbove: Type.Optional(Type.Integer({ minimum: 0, maximum: 128 })),
    keyStorage: Type.Optional(Type.Union([Type.Literal('keychain'), Type.Literal('session'), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ModelSection = Static<typeof ModelSection>;
