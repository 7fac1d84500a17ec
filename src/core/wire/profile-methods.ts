/** Profiles: named sets of services a gateway serves (`wispctl mcp serve --profile NAME`). */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { PROFILE_NAME_PATTERN, SERVICE_NAME_PATTERN } from '../patterns.js';
import { method, type MethodDef } from './define.js';

const ProfileName = Type.String({ pattern: PROFILE_NAME_PATTERN });
export const ProfileServices = Type.Array(Type.String({ pattern: SERVICE_NAME_PATTERN }), { minItems: 1, maxItems: LIMITS.maxServices, description: 'Registered names.' });
const Description = Type.String({ maxLength: LIMITS.maxProfileDescriptionChars, pattern: '^[^\\u0000\\r\\n]*$' });
const Member = Type.Object({ id: Type.String(), name: Type.String() });

export const GatewayProfile = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  services: Type.Array(Member, { description: 'The services it serves, registered now, by their names now.' }),
  dropped: Type.Array(Member, {
    description: 'Services it named that were deleted since (by the name they had): served no more, never replaced by a service of the same name. The next profiles.set forgets them.',
  }),
});
export type GatewayProfile = Static<typeof GatewayProfile>;

export const profileMethods = {
  'profiles.list': method({
    summary: 'Every profile, by name: the services it serves now, and those deleted since (dropped).',
    params: Type.Object({}, { additionalProperties: false }),
    result: Type.Object({ profiles: Type.Array(GatewayProfile) }),
    errors: ['PROFILES_UNREADABLE'],
  }),
  'profiles.set': method({
    summary:
      'Create a profile (create: true, with services; PROFILE_EXISTS if there is one) or change one (PROFILE_NOT_FOUND if there is none): services replaces its whole set, ' +
      'add and remove change it (not with services), description replaces it (null: none). Every service is named as registered now (SERVICE_NOT_FOUND: nothing is written), and ' +
      `kept by id; the ones deleted since are forgotten; at least one remains (INVALID_PARAMS). At most ${LIMITS.maxProfiles} profiles. Gateways serving it follow at once (profile.changed). The answer: the profile now.`,
    params: Type.Object(
      {
        name: ProfileName,
        create: Type.Optional(Type.Boolean()),
        services: Type.Optional(ProfileServices),
        add: Type.Optional(ProfileServices),
        remove: Type.Optional(ProfileServices),
        description: Type.Optional(Type.Union([Description, Type.Null()])),
      },
      { additionalProperties: false },
    ),
    result: GatewayProfile,
    errors: ['PROFILE_EXISTS', 'PROFILE_NOT_FOUND', 'SERVICE_NOT_FOUND', 'INVALID_PARAMS', 'LIMIT_EXCEEDED', 'PROFILES_UNREADABLE', 'STORAGE_FAILED'],
  }),
  'profiles.delete': method({
    summary: 'Remove a profile (the answer: what it was). A gateway serving it serves nothing from then on (it never falls back to every service); one started later with it refuses to start.',
    params: Type.Object({ name: ProfileName }, { additionalProperties: false }),
    result: GatewayProfile,
    errors: ['PROFILE_NOT_FOUND', 'PROFILES_UNREADABLE', 'STORAGE_FAILED'],
  }),
} as const satisfies Record<string, MethodDef>;
