import { Type, type Static } from '@sinclair/typebox';
import { LIMITS, PROFILE_NAME_PATTERN } from '../core/index.js';

/**
 * The schema of profiles.json in the data dir (profile-store.ts). Only its types are imported
 * at run time: the check is generated at build time (scripts/validators.mjs, profiles-check),
 * so the daemon starts without TypeBox.
 */
const Member = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    /** The service's name when the profile was last written: what a profile shows of a service deleted since. */
    name: Type.String({ minLength: 1, maxLength: LIMITS.maxServiceNameChars }),
  },
  { additionalProperties: false },
);

export const StoredProfile = Type.Object(
  {
    name: Type.String({ pattern: PROFILE_NAME_PATTERN }),
    description: Type.Union([Type.String({ maxLength: LIMITS.maxProfileDescriptionChars }), Type.Null()]),
    services: Type.Array(Member, { maxItems: LIMITS.maxServices }),
  },
  { additionalProperties: false },
);
export type StoredProfile = Static<typeof StoredProfile>;

export const ProfileDocument = Type.Object(
  {
    schemaVersion: Type.Literal(1),
    profiles: Type.Array(StoredProfile, { maxItems: LIMITS.maxProfiles }),
  },
  { additionalProperties: false },
);
export type ProfileDocument = Static<typeof ProfileDocument>;
