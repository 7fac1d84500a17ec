/** The methods of the daemon, events, services, tools and approvals (part of the method table). */
import { Type } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { CLIENT_NAME_PATTERN, GATEWAY_ID_PATTERN } from '../patterns.js';
import { method, type MethodDef } from './define.js';
import { Approval, Args, Command, Cwd, EnvName, NoNul, NoParams, OAuthFlowProps, Service, ServiceName, ServiceRef, ServiceRefProps, Storage, TimeoutMs, ToolCallResult, ToolInfo, MediaWanted } from './shapes.js';
import { DaemonStatus } from './status-shapes.js';
import { SandboxPlanView, SandboxProfileParam, SandboxState } from './sandbox-shapes.js';
import { events } from './events.js';

/** A remote service's URL: services.registerRemote and services.update check it alike. */
/** A service's media setting (see Service.media). */
const MediaSetting = Type.Boolean({ description: 'Pass its images, audio and binary resources whole to gateway clients (default false: markers). Shown at trust.' });
const remoteUrl = (description?: string) => Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 4096, ...(description !== undefined ? { description } : {}) });

export const serviceMethods = {
  'daemon.status': method({
    summary: 'Version, pid, uptime, paths and counts.',
    params: NoParams,
    result: DaemonStatus,
  }),
  'daemon.shutdown': method({
    summary: 'Stop the daemon: stop accepting, cancel in-flight work, flush state, remove the socket, exit 0.',
    params: NoParams,
    result: Type.Object({ stopping: Type.Literal(true) }),
  }),
  'rpc.discover': method({
    summary: 'This protocol as an OpenRPC 1.3 document.',
    params: NoParams,
    result: Type.Object({ openrpc: Type.String() }, { additionalProperties: true }),
  }),
  'events.subscribe': method({
    summary:
      'Receive events as `event` notifications. With `since`, first replays held events with seq > since (from this run). ' +
      '`missed` is true when some were no longer held or `runId` names an earlier run.',
    params: Type.Object(
      {
        since: Type.Optional(Type.Integer({ minimum: 0, description: 'Last seq this client saw.' })),
        runId: Type.Optional(Type.String({ description: 'The runId that `since` belongs to.' })),
        types: Type.Optional(
          Type.Array(Type.Union(Object.keys(events).map((type) => Type.Literal(type))), {
            minItems: 1,
            uniqueItems: true,
            description: 'Only these event types (replay included); absent: every event. A client that waits only for approvals asks for approval.requested and approval.resolved.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      runId: Type.String(),
      lastSeq: Type.Integer(),
      replayed: Type.Integer(),
      missed: Type.Boolean(),
    }),
    errors: ['EVENTS_UNAVAILABLE'],
  }),
  'events.unsubscribe': method({
    summary: 'Stop receiving events on this connection.',
    params: NoParams,
    result: Type.Object({ subscribed: Type.Literal(false) }),
  }),
  'services.register': method({
    summary: 'Register a stdio MCP server. It is stored disabled; nothing runs. The command must be absolute or a bare program name; one that runs Wisp\'s own gateway (wispctl ... mcp serve) is refused: SELF_GATEWAY.',
    params: Type.Object(
      { name: ServiceName, command: Command, args: Type.Optional(Args), cwd: Type.Optional(Cwd), timeoutMs: Type.Optional(TimeoutMs), sandbox: Type.Optional(SandboxProfileParam), media: Type.Optional(MediaSetting) },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NAME_TAKEN', 'LIMIT_EXCEEDED', 'INVALID_CONFIG', 'STORAGE_FAILED', 'SELF_GATEWAY'],
  }),
  'services.registerRemote': method({
    summary: 'Register a remote MCP server (streamable HTTP, or the legacy HTTP+SSE transport). It is stored disabled; nothing connects. Header values are set with services.setHeaders.',
    params: Type.Object(
      {
        name: ServiceName,
        url: remoteUrl(),
        transport: Type.Optional(
          Type.Union([Type.Literal('http'), Type.Literal('sse')], { description: 'http (default): streamable HTTP; sse: the legacy HTTP+SSE transport (the url is its GET event stream).' }),
        ),
        timeoutMs: Type.Optional(TimeoutMs),
        media: Type.Optional(MediaSetting),
        oauth: Type.Optional(
          Type.Object(
            {
              clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'A pre-registered client id; without it the client registers itself (dynamic registration).' })),
              scopes: Type.Optional(Type.String({ maxLength: 1024 })),
              clientSecret: Type.Optional(
                Type.String({ minLength: 1, maxLength: 4096, pattern: NoNul, description: 'The pre-registered client\'s secret (write-only: kept in the keychain, never shown).' }),
              ),
              ...OAuthFlowProps,
              privateKey: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, pattern: NoNul, description: 'private_key_jwt: the client\'s private key, PKCS#8 PEM (write-only: kept in the keychain).' })),
              identityAssertion: Type.Optional(
                Type.String({ minLength: 1, maxLength: 16384, pattern: NoNul, description: 'cross_app: the identity assertion (an ID token from the IdP) (write-only: kept in the keychain).' }),
              ),
            },
            { additionalProperties: false, description: 'Log in with OAuth (wispctl mcp login NAME).' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NAME_TAKEN', 'LIMIT_EXCEEDED', 'INVALID_CONFIG', 'STORAGE_FAILED'],
  }),
  'services.login': method({
    summary:
      'OAuth login for a remote service, bound to the configVersion shown: arms a loopback listener on 127.0.0.1, announces the authorization URL (event service.login), ' +
      'waits for the callback (its state must match), saves the tokens in the keychain, then activates. Disconnecting cancels it.',
    params: Type.Object({ ...ServiceRefProps, configVersion: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'APPROVAL_STALE', 'INVALID_CONFIG', 'AUTH_FAILED', 'CANCELLED', 'TIMEOUT', 'KEYCHAIN_UNAVAILABLE'],
  }),
  'services.logout': method({
    summary:
      'Log a remote service out: stop it, revoke its refresh token at the authorization server when that offers revocation (RFC 7009), then remove its tokens and ' +
      'client registration from the keychain. The service then waits in needs_auth; `revocation` says what happened at the server.',
    params: ServiceRef,
    result: Type.Object({
      service: Service,
      revocation: Type.Object(
        {
          status: Type.Union([Type.Literal('revoked'), Type.Literal('unsupported'), Type.Literal('failed'), Type.Literal('nothing')], {
            description: 'revoked: at the server; unsupported: it offers no revocation; failed: it could not be asked or refused; nothing: no token was saved.',
          }),
          message: Type.String({ maxLength: 1000 }),
        },
        { additionalProperties: false },
      ),
    }),
    errors: ['SERVICE_NOT_FOUND', 'INVALID_CONFIG', 'KEYCHAIN_UNAVAILABLE'],
  }),
  'services.list': method({
    summary: 'Every registered service, in registration order.',
    params: NoParams,
    result: Type.Object({ services: Type.Array(Service) }),
  }),
  'services.get': method({
    summary: 'One service, by id or name.',
    params: ServiceRef,
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND'],
  }),
  'services.update': method({
    summary:
      'Edit a service. It is stopped (its tools withdrawn at once), disabled, and its configVersion bumped. With configVersion, refused if the service changed since. ' +
      'url (remote services only) is a new trust like a new command: the tool pins are reset, and a saved OAuth login (tokens, client registration) is forgotten, since it belongs to the old server.',
    params: Type.Object(
      {
        ...ServiceRefProps,
        configVersion: Type.Optional(Type.Integer({ minimum: 1, description: 'The version the caller looked at.' })),
        set: Type.Object(
          {
            name: Type.Optional(ServiceName),
            command: Type.Optional(Command),
            args: Type.Optional(Args),
            cwd: Type.Optional(Type.Union([Cwd, Type.Null()], { description: 'null clears it.' })),
            timeoutMs: Type.Optional(Type.Union([TimeoutMs, Type.Null()], { description: 'null restores the default.' })),
            url: Type.Optional(remoteUrl('A remote (http or sse) service\'s URL; refused for a stdio service (INVALID_CONFIG).')),
            sandbox: Type.Optional(SandboxProfileParam),
            media: Type.Optional(MediaSetting),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'SERVICE_NAME_TAKEN', 'VERSION_CONFLICT', 'INVALID_CONFIG', 'STORAGE_FAILED', 'KEYCHAIN_UNAVAILABLE', 'SELF_GATEWAY'],
  }),
  'services.allowNet': method({
    summary:
      'Grant (or with revoke, take back) a network host to a sandboxed stdio service. host is host, host:port, [v6]:port, *.domain or an IP address (INVALID_PARAMS otherwise, with field host). ' +
      'A service whose network is host grants or ask gets a live grant (change: live): stored with the service, applied by its running egress proxy to the next connection, no restart, no configVersion bump. ' +
      'A service with no network (none) gets a profile change (change: profile): its network becomes that one host, configVersion is bumped and it is stopped and disabled, to be trusted again. ' +
      'change unchanged: it was granted already. A grant of the profile itself is taken back with services.update (wispctl mcp sandbox NAME --revoke-net), not here (INVALID_PARAMS).',
    params: Type.Object(
      {
        ...ServiceRefProps,
        host: Type.String({ minLength: 1, maxLength: 300, description: 'host[:port], as wispctl mcp allow takes it.' }),
        revoke: Type.Optional(Type.Boolean({ description: 'true: take the live grant back (new connections are refused; open ones run to their end).' })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      service: Service,
      grant: Type.String({ description: 'The grant in canonical form (lower case, the web ports left out).' }),
      change: Type.Union([Type.Literal('live'), Type.Literal('profile'), Type.Literal('unchanged')]),
    }),
    errors: ['SERVICE_NOT_FOUND', 'INVALID_PARAMS', 'INVALID_CONFIG', 'LIMIT_EXCEEDED', 'STORAGE_FAILED'],
  }),
  'services.sandboxPlan': method({
    summary:
      'What a sandboxed launch of a stdio service would be given, worked out now as activation will: every path it sees (read-only, read-write, private), its network, the paths its args name that no grant covers, ' +
      'and whether a sandbox can be had on this machine. What a trust prompt shows. plan is null for a service that is not sandboxed (sandbox off, legacy, remote).',
    params: ServiceRef,
    result: Type.Object({ sandbox: SandboxState, plan: Type.Union([SandboxPlanView, Type.Null()]) }),
    errors: ['SERVICE_NOT_FOUND', 'COMMAND_NOT_FOUND', 'COMMAND_NOT_EXECUTABLE', 'ENV_NOT_ALLOWED'],
  }),
  'services.delete': method({
    summary: 'Stop a service (if running) and remove it from the registry. A service synced from a config file is refused (INVALID_CONFIG): it would come back at the next reload; the message says how to remove it from its source.',
    params: ServiceRef,
    result: Type.Object({ deleted: Type.Object({ id: Type.String(), name: Type.String() }) }),
    errors: ['SERVICE_NOT_FOUND', 'INVALID_CONFIG', 'STORAGE_FAILED', 'KEYCHAIN_UNAVAILABLE'],
  }),
  'services.checkKeychain': method({
    summary:
      'Whether the OS keychain can be used now (one read of an entry that never exists): a client asks before it prompts for a value to keep there. ' +
      'Writes nothing; a locked keychain may ask the user to unlock it.',
    params: NoParams,
    result: Type.Object({ available: Type.Boolean(), reason: Type.Union([Type.String(), Type.Null()], { description: 'Why not (null when available).' }) }),
  }),
  'services.setEnv': method({
    summary:
      'Set the service\'s environment variables. replace: these become ALL its variables (an empty list clears them); upsert: set these, keep the others. ' +
      'Values are write-only and go to the keychain or memory, bound to the current command, args and cwd. The service is stopped and disabled, and its configVersion bumped.',
    params: Type.Object(
      {
        ...ServiceRefProps,
        variables: Type.Array(
          Type.Object(
            {
              name: EnvName,
              value: Type.String({ maxLength: LIMITS.maxEnvValueBytes, pattern: NoNul }),
              storage: Storage,
              plain: Type.Optional(Type.Boolean({ description: 'true: no secret (a path, a setting): never redacted. Without: a secret, redacted wherever it appears.' })),
            },
            { additionalProperties: false },
          ),
          { maxItems: LIMITS.maxEnvVars },
        ),
        mode: Type.Union([Type.Literal('replace'), Type.Literal('upsert')]),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'KEYCHAIN_UNAVAILABLE', 'INVALID_CONFIG', 'LIMIT_EXCEEDED', 'STORAGE_FAILED'],
  }),
  'services.setHeaders': method({
    summary:
      'Set a remote service\'s HTTP headers (e.g. Authorization). replace: these become ALL its headers; upsert: set these, keep the others. ' +
      'Values are write-only secrets (keychain or memory), bound to the current URL. The service is stopped and disabled, and its configVersion bumped.',
    params: Type.Object(
      {
        ...ServiceRefProps,
        headers: Type.Array(
          Type.Object(
            {
              name: Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", maxLength: 128 }),
              value: Type.String({ maxLength: LIMITS.maxEnvValueBytes, pattern: '^[^\\u0000\\r\\n]*$' }),
              storage: Storage,
            },
            { additionalProperties: false },
          ),
          { maxItems: LIMITS.maxEnvVars },
        ),
        mode: Type.Union([Type.Literal('replace'), Type.Literal('upsert')]),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'KEYCHAIN_UNAVAILABLE', 'INVALID_CONFIG', 'LIMIT_EXCEEDED', 'STORAGE_FAILED'],
  }),
  'services.carryOverEnv': method({
    summary:
      'Confirm that the saved variable values may go to the edited command, args and cwd (bound to the configVersion the human was shown): re-binds them. ' +
      'A remote service: its saved header values may go to its edited URL.',
    params: Type.Object({ ...ServiceRefProps, configVersion: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'APPROVAL_STALE', 'KEYCHAIN_UNAVAILABLE', 'SECRET_MISSING'],
  }),
  'services.activate': method({
    summary:
      'Trust and activate: start the program, initialize, discover every page of tools. Bound to the configVersion the human was shown. ' +
      'Answers when activation has ended, with the resulting state (active, or failed with a code). Nothing restarts it automatically. ' +
      'Wisp\'s own gateway (wispctl ... mcp serve) is refused before anything runs: SELF_GATEWAY.',
    params: Type.Object(
      { ...ServiceRefProps, configVersion: Type.Integer({ minimum: 1, description: 'The version whose command, args and cwd were shown.' }) },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'APPROVAL_STALE', 'SERVICE_BUSY', 'DAEMON_STOPPING', 'KEYCHAIN_UNAVAILABLE', 'SECRET_MISSING', 'SECRET_BINDING_CHANGED', 'SELF_GATEWAY'],
  }),
  'services.disable': method({
    summary: 'Stop a service: its tools are withdrawn at once, then stdin is closed, then SIGTERM and SIGKILL go to its process group. A second disable forces it.',
    params: ServiceRef,
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND'],
  }),
  'services.refreshTools': method({
    summary: 'Discover the tools of an active service again (all pages). On failure the service goes to failed and its tools are withdrawn.',
    params: ServiceRef,
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'SERVICE_NOT_ACTIVE'],
  }),
  'services.logs': method({
    summary: 'The tail of what the service wrote to stderr (kept in memory only, never on disk).',
    params: ServiceRef,
    result: Type.Object({ stderr: Type.String(), droppedChars: Type.Integer({ description: 'Older output no longer held.' }) }),
    errors: ['SERVICE_NOT_FOUND'],
  }),
  'tools.list': method({
    summary:
      'The catalog of active tools, across services or for one, a page at a time (at most 512 KB): pass nextCursor back as cursor ' +
      'for the next page, until it is null. A cursor counts tools, so a catalog that changes between pages can shift by the change.',
    params: Type.Object(
      {
        serviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        cursor: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,5})$' })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ tools: Type.Array(ToolInfo), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
  }),
  'tools.call': method({
    summary:
      'Call a tool: checked against its schema (no approval for invalid arguments), then an approval is requested and the call waits ' +
      '(no timeout on the human). Runs exactly once, on exactly the connection and tool list shown, if approved. Failures come back as errors.',
    params: Type.Object(
      {
        modelName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'From tools.list; or give serviceId and toolName.' })),
        serviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        toolName: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
        arguments: Type.Object({}, { additionalProperties: true }),
        media: Type.Optional(MediaWanted),
      },
      { additionalProperties: false },
    ),
    result: ToolCallResult,
    errors: ['TOOL_NOT_FOUND', 'SERVICE_NOT_ACTIVE', 'LIMIT_EXCEEDED', 'INVALID_ARGUMENTS', 'APPROVAL_DENIED', 'APPROVAL_STALE', 'CANCELLED', 'TIMEOUT', 'TOOL_ERROR', 'PROTOCOL_ERROR', 'SERVER_EXITED', 'NEEDS_AUTH', 'CONNECTION_CLOSED'],
  }),
  'approvals.list': method({
    summary:
      'Open approvals (pending, or approved and not yet used); with all, recently resolved ones too. Oldest first, one page at a time: ' +
      `at most limit (default and max ${LIMITS.maxApprovalsPage}) and at most ${LIMITS.maxPageBytes} bytes of approvals (always at least one); ` +
      'pass nextCursor back as cursor for the next page.',
    params: Type.Object(
      {
        all: Type.Optional(Type.Boolean()),
        cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'The nextCursor of the previous page.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxApprovalsPage })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      approvals: Type.Array(Approval),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Null on the last page.' }),
    }),
  }),
  'approvals.respond': method({
    summary:
      'Approve or deny a pending approval. The first answer wins; later answers get APPROVAL_NOT_PENDING. ' +
      'A network.connect approval approved with scope always also grants that host and port to the service for good, as services.allowNet does (a live grant: shown by services.get, taken back with services.allowNet revoke).',
    params: Type.Object(
      {
        id: Type.String({ minLength: 1, maxLength: 128 }),
        decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
        scope: Type.Optional(
          Type.Union([Type.Literal('once'), Type.Literal('always')], {
            description: 'network.connect only, with approve: once (the default) lets this one connection through; always records a live grant of the host and port too. Given with another kind, or with deny, it is INVALID_PARAMS.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ approval: Approval }),
    errors: ['APPROVAL_NOT_FOUND', 'APPROVAL_NOT_PENDING', 'INVALID_PARAMS', 'INVALID_CONFIG', 'SERVICE_NOT_FOUND', 'STORAGE_FAILED'],
  }),
  'client.identify': method({
    summary:
      'Name this connection (once): from now on its client id in approvals (requester, by), events and the audit log is `client-N (NAME)`. ' +
      'wispctl mcp serve names each MCP connection after the MCP client (mcp:claude-code). ' +
      `A gateway also names itself (gateway, once, before the connection's first call): every connection giving the same id counts as one client for ${LIMITS.maxPendingCallsPerClient} waiting calls, ` +
      `with at most ${LIMITS.maxConnectionsPerGateway} connections per gateway, ${LIMITS.maxGatewayConnections} and ${LIMITS.maxGatewayPendingCalls} waiting calls for every gateway together ` +
      `(the rest of the ${LIMITS.maxPendingCalls} is kept for other clients); over a connection cap the answer is LIMIT_EXCEEDED and the connection is closed. ` +
      'Setting name or gateway a second time is refused.',
    params: Type.Object(
      {
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: CLIENT_NAME_PATTERN, description: 'Letters, digits and . _ : @ + - (no spaces), at most 64.' })),
        gateway: Type.Optional(
          Type.String({
            pattern: GATEWAY_ID_PATTERN,
            description: 'The gateway this connection belongs to: a random id one `wispctl mcp serve` process (with --http: its one token) makes at start and gives on each of its connections. Never sent back.',
          }),
        ),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    result: Type.Object({ clientId: Type.String() }),
    errors: ['INVALID_PARAMS', 'LIMIT_EXCEEDED'],
  }),
  'rpc.cancel': method({
    summary:
      'Cancel one of this connection\'s own requests still running, by its JSON-RPC id: its work is aborted as if the client had gone away ' +
      '(a waiting approval ends cancelled with the reason, a running call is cancelled). cancelled is false when no request of that id runs.',
    params: Type.Object(
      {
        id: Type.Union([Type.Integer(), Type.String({ maxLength: 128 })]),
        reason: Type.Optional(Type.String({ maxLength: 200, pattern: NoNul, description: 'Why, for the approval\'s record (default: the client cancelled the request).' })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ cancelled: Type.Boolean() }),
  }),
} as const satisfies Record<string, MethodDef>;
