import { Type, type Static } from '@sinclair/typebox';

/* Only its types are imported at run time: the check is generated from it at build time
   (scripts/validators.mjs), so the daemon runs it without TypeBox or ajv's compiler. */

/** The `installs` section of settings.json (optional: absent, the defaults apply). Persisted: additive changes only. */
export const InstallsSection = Type.Object(
  {
    runtimeDirs: Type.Optional(Type.Array(Type.String({ pattern: '^/' }), { minItems: 1, maxItems: 16 })),
    registry: Type.Optional(Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()])),
    caFile: Type.Optional(Type.Union([Type.String({ pattern: '^/' }), Type.Null()])),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
    sandbox: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type InstallsSection = Static<typeof InstallsSection>;
