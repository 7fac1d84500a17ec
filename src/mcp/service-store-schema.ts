import { Type, type Static } from '@sinclair/typebox';
import { ENV_NAME_PATTERN, GRANT_PATH_PATTERN, LIMITS, NET_GRANT_PATTERN, SERVICE_NAME_PATTERN } from '../core/index.js';
import { SCHEMA_VERSION } from './registry-version.js';

/** OAuth without a person: client credentials, or cross-app access (an identity assertion exchanged for an access token). */
export const OAuthGrant = Type.Union([Type.Literal('client_credentials'), Type.Literal('cross_app')]);
/** How a pre-registered client proves itself at the token endpoint: its secret (HTTP Basic), or a JWT signed with its key. */
export const OAuthClientAuth = Type.Union([Type.Literal('client_secret_basic'), Type.Literal('private_key_jwt')]);
export const OAuthSigningAlg = Type.Union(['ES256', 'ES384', 'RS256', 'RS384', 'RS512', 'PS256', 'EdDSA'].map((alg) => Type.Literal(alg)));
const HttpsUrl = Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2048 });
const HttpUrl = Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048 });

/**
 * The schema of mcp-servers.json. Only its types are imported at run time: the check of a
 * document is generated from it at build time (scripts/validators.mjs), so the daemon starts
 * without TypeBox.
 */

/** A service registered by a verified npm install: the plan it came from. */
export const InstallOrigin = Type.Object(
  {
    kind: Type.Literal('install'),
    planDigest: Type.String({ pattern: '^[0-9a-f]{32}$' }),
    package: Type.String({ minLength: 1, maxLength: 214 }),
    version: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);
export type InstallOrigin = Static<typeof InstallOrigin>;

/** A service synced from a config source (global settings, a plugin, a project's .mcp.json). */
export const SourceOrigin = Type.Object(
  {
    kind: Type.Literal('source'),
    source: Type.Union([Type.Literal('global'), Type.Literal('plugin'), Type.Literal('project')]),
    file: Type.String({ minLength: 1, maxLength: 4096 }),
    plugin: Type.Union([Type.String(), Type.Null()]),
    /** Digest of the entry's content without secret values: a change disables the service. */
    digest: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  },
  { additionalProperties: false },
);
export type SourceOrigin = Static<typeof SourceOrigin>;

/** A service copied once from a file by services.import: not synced, edited like one registered by hand. */
export const ImportOrigin = Type.Object(
  { kind: Type.Literal('import'), file: Type.String({ minLength: 1, maxLength: 4096 }), at: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
export type ImportOrigin = Static<typeof ImportOrigin>;
export type ServiceOrigin = InstallOrigin | SourceOrigin | ImportOrigin;

const SecretRef = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 256 }), storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]) },
  { additionalProperties: false },
);

/** A value written with `${VAR}` templates (config sources, imports): kept as written, filled in at launch. */
const Template = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 256 }), template: Type.String({ maxLength: LIMITS.maxCommandChars }) },
  { additionalProperties: false },
);

const GrantPath = Type.String({ pattern: GRANT_PATH_PATTERN, maxLength: LIMITS.maxCommandChars });

/**
 * A stdio service's sandbox: what it may read and write besides what it needs to run (its
 * runtime, the system's libraries, the script or package its command and args name, read
 * only; its cwd, read-write; a private empty $HOME and /tmp: all of those are worked out at
 * each launch from command, args and cwd, src/mcp/sandbox/), and its network. Part of what
 * defines the service: a change bumps configVersion and disables it. Absent: a service
 * registered before sandboxes existed, which runs unsandboxed until turned on.
 */
export const SandboxProfile = Type.Object(
  {
    /** false: --no-sandbox, the service runs with every file and the network the user has. */
    enabled: Type.Boolean(),
    read: Type.Array(GrantPath, { maxItems: LIMITS.maxSandboxGrants }),
    write: Type.Array(GrantPath, { maxItems: LIMITS.maxSandboxGrants }),
    net: Type.Union([
      Type.Object({ mode: Type.Literal('none') }, { additionalProperties: false }),
      Type.Object({ mode: Type.Literal('all') }, { additionalProperties: false }),
      Type.Object(
        { mode: Type.Literal('ask'), hosts: Type.Optional(Type.Array(Type.String({ pattern: NET_GRANT_PATTERN, maxLength: 260 }), { maxItems: LIMITS.maxSandboxGrants })) },
        { additionalProperties: false },
      ),
      Type.Object(
        { mode: Type.Literal('hosts'), hosts: Type.Array(Type.String({ pattern: NET_GRANT_PATTERN, maxLength: 260 }), { minItems: 1, maxItems: LIMITS.maxSandboxGrants }) },
        { additionalProperties: false },
      ),
    ]),
  },
  { additionalProperties: false },
);
export type SandboxProfile = Static<typeof SandboxProfile>;

const StoredService = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String({ pattern: SERVICE_NAME_PATTERN }),
    /** Absent: stdio (every service before remote ones existed). */
    transport: Type.Optional(Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')])),
    /** stdio: the program (never empty). http: empty. */
    command: Type.String({ maxLength: LIMITS.maxCommandChars }),
    /** http: the streamable HTTP endpoint. */
    url: Type.Optional(Type.Union([Type.String({ pattern: '^https?://', maxLength: 4096 }), Type.Null()])),
    /** http: OAuth (authorization code + PKCE); tokens live in the keychain, never here. */
    oauth: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Object(
          {
            enabled: Type.Boolean(),
            clientId: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]),
            scopes: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]),
            /** Without: the authorization code flow (a person logs in). The secrets these need live in the keychain. */
            grant: Type.Optional(OAuthGrant),
            clientAuth: Type.Optional(OAuthClientAuth),
            signingAlg: Type.Optional(OAuthSigningAlg),
            clientMetadataUrl: Type.Optional(HttpsUrl),
            idpTokenEndpoint: Type.Optional(HttpUrl),
            idpClientId: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
          },
          { additionalProperties: false },
        ),
      ]),
    ),
    /** http: header names and where their values are kept (values are secrets). */
    headers: Type.Optional(Type.Array(SecretRef, { maxItems: LIMITS.maxEnvVars })),
    /** http: headers whose value is written with `${VAR}` (stored as written; filled in at launch). */
    headerTemplates: Type.Optional(Type.Array(Template, { maxItems: LIMITS.maxEnvVars })),
    args: Type.Array(Type.String({ maxLength: LIMITS.maxCommandChars }), { maxItems: LIMITS.maxArgs }),
    cwd: Type.Union([Type.String({ pattern: '^/' }), Type.Null()]),
    timeoutMs: Type.Optional(Type.Union([Type.Integer({ minimum: 100, maximum: 600_000 }), Type.Null()])),
    /**
     * Config sources: the daemon environment variables `${VAR}` templates in command, args
     * and url refer to. The templates are stored; the values are taken at launch only.
     */
    fromEnvironment: Type.Optional(Type.Array(Type.String({ pattern: ENV_NAME_PATTERN }), { maxItems: LIMITS.maxArgs })),
    /** Names and storage only; never values. */
    env: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.String({ pattern: ENV_NAME_PATTERN }), storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]), plain: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        { maxItems: LIMITS.maxEnvVars },
      ),
    ),
    /** Variables whose value is written with `${VAR}` (stored as written; filled in at launch from the daemon's environment). */
    envTemplates: Type.Optional(Type.Array(Template, { maxItems: LIMITS.maxEnvVars })),
    /** stdio: the sandbox; absent: registered before sandboxes (runs unsandboxed, shown as such). */
    sandbox: Type.Optional(SandboxProfile),
    /**
     * Live network grants (`wispctl mcp allow`, an `ask` answered "always"): hosts this
     * service's egress proxy lets through besides its profile's, given and revoked while it
     * runs. Not part of the profile (no configVersion bump): only a service whose network is
     * host grants or `ask` has them.
     */
    netGrants: Type.Optional(Type.Array(Type.String({ pattern: NET_GRANT_PATTERN, maxLength: 260 }), { maxItems: LIMITS.maxSandboxGrants })),
    /** Images, audio and binary resources pass whole to gateway clients (absent or false: markers, the seed's rule). Part of what is trusted. */
    media: Type.Optional(Type.Boolean()),
    /** Where the configuration came from; absent or null: registered by hand. */
    origin: Type.Optional(Type.Union([Type.Null(), InstallOrigin, SourceOrigin, ImportOrigin])),
    enabled: Type.Boolean(),
    configVersion: Type.Integer({ minimum: 1 }),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { additionalProperties: false },
);
export type StoredService = Static<typeof StoredService>;

export const RegistryDocument = Type.Object(
  {
    schemaVersion: Type.Literal(SCHEMA_VERSION),
    services: Type.Array(StoredService, { maxItems: LIMITS.maxServices }),
  },
  { additionalProperties: false },
);
export type RegistryDocument = Static<typeof RegistryDocument>;
