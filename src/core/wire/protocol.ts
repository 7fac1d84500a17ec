/**
 * The control protocol: every method, its params and result, every event. This is the one
 * source of truth: the server validates against these schemas, the client is typed from
 * them, rpc.discover serves them as OpenRPC and docs/protocol.md is generated from them.
 *
 * Everything here is sent over the socket: changes must be additive.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, ERROR_CODES } from '../errors.js';
import { LIMITS } from '../limits.js';
import { ENV_NAME_PATTERN, SERVICE_NAME_PATTERN } from '../patterns.js';

const NoParams = Type.Object({}, { additionalProperties: false });
const Timestamp = Type.String({ description: 'ISO 8601 UTC timestamp' });
const NoNul = '^[^\\u0000]*$';

export const ServiceName = Type.String({
  pattern: SERVICE_NAME_PATTERN,
  description: 'Unique; 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit.',
});
const Command = Type.String({
  minLength: 1,
  maxLength: LIMITS.maxCommandChars,
  pattern: NoNul,
  description: 'Executable: an absolute path, or a bare name looked up on the daemon\'s PATH at activation. Never shell text.',
});
const Args = Type.Array(Type.String({ maxLength: LIMITS.maxCommandChars, pattern: NoNul }), {
  maxItems: LIMITS.maxArgs,
  description: 'Arguments passed to the program item by item; no shell ever parses them.',
});
const Cwd = Type.String({
  minLength: 1,
  maxLength: LIMITS.maxCommandChars,
  pattern: NoNul,
  description: 'Absolute working directory (a relative one is refused with INVALID_CONFIG). It is not a sandbox.',
});

const TimeoutMs = Type.Integer({
  minimum: 100,
  maximum: 600_000,
  description: 'Per-service timeout in ms: initialize + discovery together, and each tool call. Default 10000.',
});

const Generation = Type.Integer({ minimum: 1, description: 'Connection generation: every activation starts a new one.' });
const Pid = Type.Integer({ minimum: 1 });

export const ConnectionState = Type.Union(
  [
    Type.Object({ status: Type.Literal('disabled'), since: Timestamp }),
    Type.Object({
      status: Type.Literal('activating'),
      phase: Type.Union([Type.Literal('spawning'), Type.Literal('initializing'), Type.Literal('discovering')]),
      generation: Generation,
      pid: Type.Union([Pid, Type.Null()]),
      since: Timestamp,
    }),
    Type.Object({
      status: Type.Literal('active'),
      generation: Generation,
      pid: Type.Union([Pid, Type.Null()], { description: 'The server process; null for a remote (http) service.' }),
      toolCount: Type.Integer({ minimum: 0 }),
      toolListVersion: Type.Integer({ minimum: 1, description: 'Bumped on every tool discovery of this connection.' }),
      server: Type.Object({ name: Type.String(), version: Type.String() }, { description: 'What the server says it is: untrusted.' }),
      since: Timestamp,
    }),
    Type.Object({
      status: Type.Literal('failed'),
      generation: Generation,
      code: Type.String({ description: 'An error code from the catalog.' }),
      message: Type.String(),
      at: Timestamp,
    }),
    Type.Object({
      status: Type.Literal('needs_auth'),
      generation: Generation,
      authorizationServer: Type.Union([Type.String(), Type.Null()], { description: 'Where to log in, as the server advertises it (RFC 9728), when known.' }),
      scope: Type.Union([Type.String(), Type.Null()], { description: 'The scope the server asked for (WWW-Authenticate), used by the next login.' }),
      message: Type.String(),
      at: Timestamp,
    }),
    Type.Object({ status: Type.Literal('stopping'), generation: Generation, pid: Type.Union([Pid, Type.Null()]), since: Timestamp }),
  ],
  {
    description:
      'disabled -> activating(spawning|initializing|discovering) -> active; any step may end in failed, or (remote servers) needs_auth: log in with wispctl mcp login; stopping -> disabled.',
  },
);
export type ConnectionState = Static<typeof ConnectionState>;

const EnvName = Type.String({ pattern: ENV_NAME_PATTERN, maxLength: 128 });
const Storage = Type.Union([Type.Literal('keychain'), Type.Literal('session')], {
  description: 'keychain: the OS keychain; session: memory only, gone when the daemon stops.',
});
const EnvVariable = Type.Object({ name: EnvName, storage: Storage }, { description: 'A variable\'s name and where its value is kept. Values are write-only.' });

export const Service = Type.Object({
  id: Type.String({ description: 'Stable UUID assigned at registration.' }),
  name: ServiceName,
  transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')], { description: 'stdio: a local program; http: a remote streamable-HTTP endpoint.' }),
  command: Type.String({ description: 'stdio: the program. http: empty.' }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'http: the endpoint. stdio: null.' }),
  headers: Type.Array(EnvVariable, { description: 'http: header names and where their values are kept. Values are write-only.' }),
  oauth: Type.Union([Type.Object({ enabled: Type.Boolean(), clientId: Type.Union([Type.String(), Type.Null()]), scopes: Type.Union([Type.String(), Type.Null()]) }), Type.Null()], {
    description: 'http: OAuth login (authorization code + PKCE; tokens in the keychain). null: none.',
  }),
  args: Type.Array(Type.String()),
  cwd: Type.Union([Type.String(), Type.Null()]),
  timeoutMs: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the default (10000).' }),
  env: Type.Array(EnvVariable, { description: 'Names and storage only: values are never sent back.' }),
  fromEnvironment: Type.Array(EnvName, {
    description:
      'Variables of the daemon\'s own environment that `${VAR}` in command, args or url take at launch (config sources). command, args and url are shown as written, templates kept; the values are secrets, never stored or sent.',
  }),
  origin: Type.Union(
    [
      Type.Object({ kind: Type.Literal('manual') }),
      Type.Object({ kind: Type.Literal('install'), planDigest: Type.String(), package: Type.String(), version: Type.String() }),
      Type.Object({
        kind: Type.Literal('source'),
        source: Type.Union([Type.Literal('global'), Type.Literal('plugin'), Type.Literal('project')]),
        file: Type.String(),
        plugin: Type.Union([Type.String(), Type.Null()]),
        digest: Type.String(),
      }),
    ],
    {
      description:
        'manual: registered by hand; install: registered by a verified npm install of that plan; source: synced from a config file (edit the file and reload, not the service).',
    },
  ),
  enabled: Type.Boolean({ description: 'True while activating or active. Every edit and every daemon restart disables a service.' }),
  configVersion: Type.Integer({ minimum: 1, description: 'Bumped on every edit; a trust decision is bound to it.' }),
  connection: ConnectionState,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Service = Static<typeof Service>;

const ServiceRefProps = {
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Service id. Give id or name, not both.' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Service name. Give id or name, not both.' })),
};
const ServiceRef = Type.Object(ServiceRefProps, { additionalProperties: false });

export const ToolInfo = Type.Object({
  serviceId: Type.String(),
  serviceName: Type.String(),
  name: Type.String({ description: 'The server\'s own tool name: untrusted text.' }),
  modelName: Type.String({ description: 'Stable name for model APIs, from the service id and a digest of the tool name.' }),
  title: Type.Union([Type.String(), Type.Null()]),
  description: Type.String({ description: 'Untrusted text from the server.' }),
  inputSchema: Type.Object({}, { additionalProperties: true }),
  annotations: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Untrusted hints: shown, never obeyed.' }),
  generation: Generation,
  toolListVersion: Type.Integer(),
});
export type ToolInfo = Static<typeof ToolInfo>;
export type ServiceRef = Static<typeof ServiceRef>;

const Requester = Type.Object({
  clientId: Type.String({ description: 'The socket connection that asked.' }),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  taskId: Type.Union([Type.String(), Type.Null()]),
});

export const ApprovalState = Type.Union([
  Type.Object({ status: Type.Literal('pending') }),
  Type.Object({ status: Type.Literal('approved'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('consumed'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('denied'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('cancelled'), reason: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('stale'), reason: Type.String(), at: Timestamp }),
]);

export const Approval = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('tool_call'), Type.Literal('host_tool'), Type.Literal('registration'), Type.Literal('activation'), Type.Literal('install')], {
    description: 'tool_call: a third-party tool; host_tool, registration, activation: the model\'s host tools; install: an npm install plan (installs.start or the model\'s mcp_install_npm).',
  }),
  requester: Requester,
  binding: Type.Record(Type.String(), Type.Union([Type.String(), Type.Integer()]), {
    description:
      'What the approval is bound to; a use that differs in any key is refused. tool_call: serviceId, generation, toolListVersion, toolName, ' +
      'argumentsDigest (sha256 of the canonical arguments). activation: serviceId, configVersion. registration and host_tool: tool, argumentsDigest. install: planDigest.',
  }),
  summary: Type.Object({
    serviceName: Type.String(),
    toolName: Type.String(),
    modelName: Type.String(),
    title: Type.Union([Type.String(), Type.Null()]),
    arguments: Type.Object({}, { additionalProperties: true, description: 'Exactly what will be sent if approved.' }),
    annotations: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Untrusted hints: shown, never obeyed.' }),
  }),
  createdAt: Timestamp,
  state: ApprovalState,
});
export type Approval = Static<typeof Approval>;

export const ResultContent = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({ type: Type.Literal('resource'), uri: Type.String(), mimeType: Type.Union([Type.String(), Type.Null()]), text: Type.String() }),
  Type.Object(
    {
      type: Type.Literal('omitted'),
      originalType: Type.String({ description: 'image, audio, resource (binary), resource_link, or an unknown type.' }),
      mimeType: Type.Union([Type.String(), Type.Null()]),
      bytes: Type.Union([Type.Integer(), Type.Null()]),
      uri: Type.Union([Type.String(), Type.Null()], { description: 'Never opened.' }),
    },
    { description: 'Content that is never passed on: a marker with its type and size.' },
  ),
]);

export const ToolCallResult = Type.Object({
  callId: Type.String(),
  approvalId: Type.String(),
  content: Type.Array(ResultContent),
  structuredContent: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  text: Type.String({ description: 'The text parts joined, capped at 32,000 characters.' }),
  truncated: Type.Boolean(),
  originalLength: Type.Integer({ description: 'Characters of text before the cap.' }),
  durationMs: Type.Integer(),
});
export type ToolCallResult = Static<typeof ToolCallResult>;

const CallRef = Type.Object({
  callId: Type.String(),
  approvalId: Type.String(),
  service: Type.Object({ id: Type.String(), name: Type.String() }),
  toolName: Type.String(),
  modelName: Type.String(),
  argumentsDigest: Type.String(),
  requester: Requester,
});

export const TaskState = Type.Union([
  Type.Object({ status: Type.Literal('running') }),
  Type.Object({ status: Type.Literal('awaiting_approval'), approvalId: Type.String() }),
  Type.Object({ status: Type.Literal('completed'), finishReason: Type.String({ description: 'The model\'s last finish_reason (stop, length, content_filter...).' }) }),
  Type.Object({ status: Type.Literal('failed'), code: Type.String(), message: Type.String() }),
  Type.Object({ status: Type.Literal('cancelled'), reason: Type.String() }),
  Type.Object({ status: Type.Literal('interrupted'), reason: Type.String({ description: 'The daemon stopped while the task ran.' }) }),
]);
export type TaskState = Static<typeof TaskState>;

export const Task = Type.Object({
  id: Type.String(),
  sessionId: Type.String(),
  state: TaskState,
  startedAt: Timestamp,
  endedAt: Type.Union([Timestamp, Type.Null()]),
  rounds: Type.Integer({ description: 'Model requests made so far.' }),
  tools: Type.Array(Type.String(), { description: 'The model-facing tool names captured when the task started (its snapshot).' }),
});
export type Task = Static<typeof Task>;

export const SessionInfo = Type.Object({
  id: Type.String(),
  title: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  messageCount: Type.Integer(),
  lastTask: Type.Union([Task, Type.Null()]),
});
export type SessionInfo = Static<typeof SessionInfo>;

export const TranscriptMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
    content: Type.Union([Type.String(), Type.Null()]),
    reasoning_content: Type.Optional(Type.String()),
    tool_calls: Type.Optional(
      Type.Array(Type.Object({ id: Type.String(), type: Type.Literal('function'), function: Type.Object({ name: Type.String(), arguments: Type.String() }) })),
    ),
    tool_call_id: Type.Optional(Type.String()),
  },
  { description: 'A message as sent to the model.' },
);

export const ModelSettingsView = Type.Object({
  baseUrl: Type.String(),
  model: Type.String(),
  firstByteTimeoutMs: Type.Integer(),
  idleTimeoutMs: Type.Integer(),
  maxRetries: Type.Integer(),
  deferToolsAbove: Type.Integer({ description: 'Above this many active tools, a task offers search and execute instead of every tool.' }),
  key: Type.Union([Type.Literal('keychain'), Type.Literal('session'), Type.Literal('environment'), Type.Literal('none')], {
    description: 'Where the API key comes from (its value is never shown).',
  }),
});

const RegistryLoadError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  movedTo: Type.String({ description: 'Where the unreadable file was moved, intact.' }),
  at: Timestamp,
});

const Digest = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'A plan digest (32 hex characters).' });

export const InstallPlanView = Type.Object({
  digest: Digest,
  package: Type.String(),
  version: Type.String(),
  bin: Type.String(),
  args: Type.Array(Type.String()),
  registry: Type.String({ description: 'The only registry the install may use.' }),
  directory: Type.String({ description: 'Where it installs: mcp-installs/<digest>/ in the data dir.' }),
  will: Type.Array(Type.String()),
  wont: Type.Array(Type.String()),
  runtime: Type.Object({ node: Type.String(), nodeVersion: Type.String(), npmVersion: Type.String() }),
});

const InstallStep = Type.Union([
  Type.Literal('prepare'),
  Type.Literal('lock'),
  Type.Literal('verify'),
  Type.Literal('install'),
  Type.Literal('check_bin'),
  Type.Literal('register'),
]);

export const InstallAttempt = Type.Object({
  digest: Digest,
  package: Type.String(),
  version: Type.String(),
  bin: Type.String(),
  args: Type.Array(Type.String()),
  registry: Type.String(),
  directory: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled'), Type.Literal('timed_out'), Type.Literal('interrupted')], {
    description: 'Only succeeded is a success. The others are never replayed: discard the attempt, or install by hand.',
  }),
  step: Type.Union([Type.Null(), InstallStep], { description: 'The last step reached.' }),
  startedAt: Timestamp,
  endedAt: Type.Union([Timestamp, Type.Null()]),
  error: Type.Union([
    Type.Null(),
    Type.Object({ code: Type.String(), message: Type.String(), problems: Type.Optional(Type.Array(Type.Object({ path: Type.String(), problem: Type.String() }))) }),
  ]),
  installScripts: Type.Array(Type.String(), { description: 'Locked packages that declare install scripts: none of them was run.' }),
  lockedPackages: Type.Integer(),
  npmPid: Type.Union([Type.Integer(), Type.Null()], { description: 'npm\'s process (group) while a step runs.' }),
  runtime: Type.Object({ node: Type.String(), nodeVersion: Type.String(), npmVersion: Type.String() }),
  serviceId: Type.Union([Type.String(), Type.Null()]),
  serviceName: Type.Union([Type.String(), Type.Null()]),
  logTail: Type.String({ description: 'The end of npm\'s output (at most 16 KB).' }),
});

export const InstallSettingsView = Type.Object({
  runtimeDirs: Type.Array(Type.String(), { description: 'Where Node and npm are looked for, in order (never the shell\'s PATH).' }),
  registry: Type.Union([Type.String(), Type.Null()], { description: 'null: npm\'s own built-in default registry.' }),
  caFile: Type.Union([Type.String(), Type.Null()], { description: 'A CA bundle passed to npm, for a TLS-intercepting proxy.' }),
  timeoutMs: Type.Integer({ description: 'One install attempt, end to end.' }),
});

const EntryOriginView = Type.Object({
  source: Type.Union([Type.Literal('global'), Type.Literal('plugin'), Type.Literal('project')]),
  file: Type.String(),
  plugin: Type.Union([Type.String(), Type.Null()]),
});

export const SourcesReport = Type.Object({
  at: Timestamp,
  entries: Type.Array(
    Type.Object({
      name: Type.String(),
      origin: EntryOriginView,
      transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')]),
      overrides: Type.Union([EntryOriginView, Type.Null()], { description: 'The entry this one replaced whole (a project entry over a global one).' }),
      warnings: Type.Array(Type.String(), { description: 'Unset ${VAR}s, command and url both given, ...' }),
      action: Type.Union([Type.Literal('added'), Type.Literal('updated'), Type.Literal('unchanged'), Type.Literal('skipped')], {
        description: 'updated: its content changed, so it was stopped and disabled until trusted again.',
      }),
      reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was skipped (name taken, limit reached).' }),
      serviceId: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  skipped: Type.Array(Type.Object({ name: Type.String(), origin: EntryOriginView, reason: Type.String() }), {
    description: 'Entries not used: invalid (with why), replaced by a later one, or a plugin duplicate.',
  }),
  problems: Type.Array(Type.Object({ file: Type.String(), message: Type.String() }), { description: 'Files that could not be used at all.' }),
  removed: Type.Array(Type.String(), { description: 'Services removed because their entry is gone (or no longer valid).' }),
});

const SourcesView = Type.Object({
  configDir: Type.String({ description: 'Holds settings.json (global mcpServers, enabledPlugins) and plugins/<folder>/plugin.json.' }),
  projects: Type.Array(Type.String(), { description: 'Project directories whose .mcp.json is read, in order.' }),
  report: Type.Union([SourcesReport, Type.Null()], { description: 'The last sync (daemon start or reload).' }),
});

export const DaemonStatus = Type.Object({
  version: Type.String(),
  protocolVersion: Type.String(),
  pid: Type.Integer(),
  runId: Type.String({ description: 'Changes on every daemon start; event seq numbers are per run.' }),
  startedAt: Timestamp,
  uptimeMs: Type.Integer(),
  nodeVersion: Type.String(),
  paths: Type.Object({
    dataDir: Type.String(),
    configDir: Type.String({ description: 'Config sources: settings.json (global mcpServers, enabledPlugins) and plugins/.' }),
    runtimeDir: Type.String(),
    socket: Type.String(),
    registryFile: Type.String(),
  }),
  counts: Type.Object({
    services: Type.Integer(),
    enabledServices: Type.Integer(),
    activeTools: Type.Integer(),
    clients: Type.Integer(),
    subscribers: Type.Integer(),
  }),
  lastSeq: Type.Integer(),
  you: Type.Object({ clientId: Type.String() }, { description: 'The connection that asked.' }),
  registryLoadError: Type.Union([RegistryLoadError, Type.Null()], {
    description: 'Set when mcp-servers.json could not be read at start and was moved aside.',
  }),
});
export type DaemonStatus = Static<typeof DaemonStatus>;

interface MethodDef {
  readonly summary: string;
  readonly params: TSchema;
  readonly result: TSchema;
  readonly errors: readonly (keyof typeof ERROR_CATALOG)[];
}

function method<P extends TSchema, R extends TSchema>(def: {
  summary: string;
  params: P;
  result: R;
  errors?: (keyof typeof ERROR_CATALOG)[];
}): { summary: string; params: P; result: R; errors: readonly (keyof typeof ERROR_CATALOG)[] } {
  return { ...def, errors: def.errors ?? [] };
}

export const methods = {
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
    summary: 'Register a stdio MCP server. It is stored disabled; nothing runs. The command must be absolute or a bare program name.',
    params: Type.Object(
      { name: ServiceName, command: Command, args: Type.Optional(Args), cwd: Type.Optional(Cwd), timeoutMs: Type.Optional(TimeoutMs) },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NAME_TAKEN', 'LIMIT_EXCEEDED', 'INVALID_CONFIG', 'STORAGE_FAILED'],
  }),
  'services.registerRemote': method({
    summary: 'Register a remote MCP server (streamable HTTP). It is stored disabled; nothing connects. Header values are set with services.setHeaders.',
    params: Type.Object(
      {
        name: ServiceName,
        url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 4096 }),
        timeoutMs: Type.Optional(TimeoutMs),
        oauth: Type.Optional(
          Type.Object(
            {
              clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'A pre-registered client id; without it the client registers itself (dynamic registration).' })),
              scopes: Type.Optional(Type.String({ maxLength: 1024 })),
              clientSecret: Type.Optional(
                Type.String({ minLength: 1, maxLength: 4096, pattern: NoNul, description: 'The pre-registered client\'s secret (write-only: kept in the keychain, never shown).' }),
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
    summary: 'Remove a remote service\'s OAuth tokens and client registration from the keychain, and stop it.',
    params: ServiceRef,
    result: Type.Object({ service: Service }),
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
      'Edit a service. It is stopped (its tools withdrawn at once), disabled, and its configVersion bumped. With configVersion, refused if the service changed since.',
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
          },
          { additionalProperties: false, minProperties: 1 },
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'SERVICE_NAME_TAKEN', 'VERSION_CONFLICT', 'INVALID_CONFIG', 'STORAGE_FAILED'],
  }),
  'services.delete': method({
    summary: 'Stop a service (if running) and remove it from the registry.',
    params: ServiceRef,
    result: Type.Object({ deleted: Type.Object({ id: Type.String(), name: Type.String() }) }),
    errors: ['SERVICE_NOT_FOUND', 'STORAGE_FAILED', 'KEYCHAIN_UNAVAILABLE'],
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
            { name: EnvName, value: Type.String({ maxLength: LIMITS.maxEnvValueBytes, pattern: NoNul }), storage: Storage },
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
      'Confirm that the saved variable values may go to the edited command, args and cwd (bound to the configVersion the human was shown): re-binds them.',
    params: Type.Object({ ...ServiceRefProps, configVersion: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'APPROVAL_STALE', 'KEYCHAIN_UNAVAILABLE', 'SECRET_MISSING'],
  }),
  'services.activate': method({
    summary:
      'Trust and activate: start the program, initialize, discover every page of tools. Bound to the configVersion the human was shown. ' +
      'Answers when activation has ended, with the resulting state (active, or failed with a code). Nothing restarts it automatically.',
    params: Type.Object(
      { ...ServiceRefProps, configVersion: Type.Integer({ minimum: 1, description: 'The version whose command, args and cwd were shown.' }) },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: Service }),
    errors: ['SERVICE_NOT_FOUND', 'APPROVAL_STALE', 'SERVICE_BUSY', 'DAEMON_STOPPING', 'KEYCHAIN_UNAVAILABLE', 'SECRET_MISSING', 'SECRET_BINDING_CHANGED'],
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
      },
      { additionalProperties: false },
    ),
    result: ToolCallResult,
    errors: ['TOOL_NOT_FOUND', 'SERVICE_NOT_ACTIVE', 'LIMIT_EXCEEDED', 'INVALID_ARGUMENTS', 'APPROVAL_DENIED', 'APPROVAL_STALE', 'CANCELLED', 'TIMEOUT', 'TOOL_ERROR', 'PROTOCOL_ERROR', 'SERVER_EXITED'],
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
    summary: 'Approve or deny a pending approval. The first answer wins; later answers get APPROVAL_NOT_PENDING.',
    params: Type.Object(
      { id: Type.String({ minLength: 1, maxLength: 128 }), decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]) },
      { additionalProperties: false },
    ),
    result: Type.Object({ approval: Approval }),
    errors: ['APPROVAL_NOT_FOUND', 'APPROVAL_NOT_PENDING'],
  }),
  'sessions.create': method({
    summary: 'Start a new model session (a conversation).',
    params: Type.Object({ title: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
    result: Type.Object({ session: SessionInfo }),
  }),
  'sessions.list': method({
    summary: 'Every session, newest last.',
    params: NoParams,
    result: Type.Object({ sessions: Type.Array(SessionInfo) }),
  }),
  'sessions.get': method({
    summary: 'A session with its transcript and tasks: the most recent that fit in one reply (512 KB of messages, 128 KB of tasks); omittedMessages and omittedTasks count the older ones left out.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({
      session: SessionInfo,
      messages: Type.Array(TranscriptMessage),
      tasks: Type.Array(Task),
      omittedMessages: Type.Integer({ minimum: 0 }),
      omittedTasks: Type.Integer({ minimum: 0 }),
    }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'sessions.delete': method({
    summary: 'Cancel its task (if any) and delete a session and its transcript.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({ deleted: Type.String() }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'sessions.send': method({
    summary:
      'Start a task: one user request. It captures the active tools now and keeps that snapshot for all its model rounds. Answers at once with the task; ' +
      'progress comes as events (model.delta, model.turn, approval.*, tool.call.*, task.state).',
    params: Type.Object(
      { id: Type.String({ minLength: 1, maxLength: 128 }), text: Type.String({ minLength: 1, maxLength: LIMITS.maxUserMessageChars }) },
      { additionalProperties: false },
    ),
    result: Type.Object({ task: Task }),
    errors: ['SESSION_NOT_FOUND', 'TASK_RUNNING'],
  }),
  'sessions.cancel': method({
    summary: 'Cancel the running task: stops the model stream, cancels its pending approvals and running calls.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({ task: Type.Union([Task, Type.Null()]) }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'model.getSettings': method({
    summary: 'The model settings, and where the API key comes from (never its value).',
    params: NoParams,
    result: Type.Object({ settings: ModelSettingsView }),
  }),
  'model.setSettings': method({
    summary: 'Change model settings (base URL, model name, timeouts, retries). Used from the next task on.',
    params: Type.Object(
      {
        baseUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2048 })),
        model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
        idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
        maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
        deferToolsAbove: Type.Optional(Type.Integer({ minimum: 0, maximum: 128 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    result: Type.Object({ settings: ModelSettingsView }),
    errors: ['STORAGE_FAILED'],
  }),
  'model.setKey': method({
    summary: 'Save the model API key (write-only): in the OS keychain, or for this daemon run only. An empty value removes it.',
    params: Type.Object(
      { value: Type.String({ maxLength: 4096, pattern: NoNul }), storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]) },
      { additionalProperties: false },
    ),
    result: Type.Object({ settings: ModelSettingsView }),
    errors: ['KEYCHAIN_UNAVAILABLE', 'STORAGE_FAILED'],
  }),
  'installs.plan': method({
    summary: 'Plan an npm install: checks the request (exact version), finds Node and npm 12+, and shows the registry, the directory and what it will and will not do. Writes nothing.',
    params: Type.Object(
      {
        package: Type.String({ minLength: 1, maxLength: 214, description: 'The full package name (name or @scope/name).' }),
        version: Type.String({ minLength: 1, maxLength: 256, description: 'An exact version: no ranges, tags, URLs, git or file specs.' }),
        bin: Type.String({ minLength: 1, maxLength: 214, description: 'The package\'s JavaScript bin to run.' }),
        args: Type.Optional(Type.Array(Type.String({ maxLength: LIMITS.maxCommandChars, pattern: NoNul }), { maxItems: LIMITS.maxArgs, description: 'Non-sensitive launch arguments.' })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ plan: InstallPlanView }),
    errors: ['INVALID_PLAN', 'RUNTIME_NOT_FOUND', 'NPM_TOO_OLD'],
  }),
  'installs.start': method({
    summary:
      'Ask a human to approve the plan (an approval of kind install), then run it: lock, verify every locked package, npm ci with scripts off, register the server DISABLED. ' +
      'Answers when the attempt ends; progress comes as install.progress events. Disconnecting cancels it.',
    params: Type.Object({ planDigest: Digest }, { additionalProperties: false }),
    result: Type.Object({ attempt: InstallAttempt, service: Service, reused: Type.Boolean({ description: 'True when an earlier successful install of the same plan was used without running npm.' }) }),
    errors: ['PLAN_NOT_FOUND', 'INSTALL_UNFINISHED', 'INSTALL_RUNNING', 'APPROVAL_DENIED', 'CANCELLED', 'TIMEOUT', 'INSTALL_FAILED', 'INSTALL_REJECTED', 'INSTALL_BIN_INVALID', 'RUNTIME_NOT_FOUND', 'NPM_TOO_OLD', 'LIMIT_EXCEEDED'],
  }),
  'installs.list': method({
    summary: 'Every recorded install attempt, newest first.',
    params: NoParams,
    result: Type.Object({ attempts: Type.Array(InstallAttempt) }),
  }),
  'installs.get': method({
    summary: 'One install attempt, with npm\'s log tail.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ attempt: InstallAttempt }),
    errors: ['PLAN_NOT_FOUND'],
  }),
  'installs.cancel': method({
    summary: 'Cancel a running or queued install: npm\'s whole process group is stopped; the attempt ends cancelled.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ cancelled: Type.Boolean({ description: 'False when nothing of that plan was running.' }) }),
  }),
  'installs.discard': method({
    summary: 'Remove an attempt that did not succeed (its directory and record), so the plan can be installed again. A succeeded install is never removed: there is no uninstall.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ discarded: InstallAttempt }),
    errors: ['PLAN_NOT_FOUND', 'INSTALL_RUNNING', 'INVALID_PARAMS'],
  }),
  'installs.getSettings': method({
    summary: 'Install settings: runtime directories, registry, CA bundle, time limit.',
    params: NoParams,
    result: Type.Object({ settings: InstallSettingsView }),
  }),
  'installs.setSettings': method({
    summary: 'Change install settings. registry and caFile take null to go back to the default.',
    params: Type.Object(
      {
        runtimeDirs: Type.Optional(Type.Array(Type.String({ pattern: '^/', maxLength: 1024 }), { minItems: 1, maxItems: 16 })),
        registry: Type.Optional(Type.Union([Type.String({ pattern: '^https?://', maxLength: 2048 }), Type.Null()])),
        caFile: Type.Optional(Type.Union([Type.String({ pattern: '^/', maxLength: 1024 }), Type.Null()])),
        timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    result: Type.Object({ settings: InstallSettingsView }),
    errors: ['STORAGE_FAILED'],
  }),
  'sources.list': method({
    summary: 'The config sources (global settings, enabled plugins, projects) and what the last sync did with every entry.',
    params: NoParams,
    result: SourcesView,
  }),
  'sources.reload': method({
    summary: 'Read the config sources again and sync them into the registry: changed entries are stopped and disabled, gone ones removed. Services registered by hand are never touched.',
    params: NoParams,
    result: SourcesView,
  }),
  'sources.addProject': method({
    summary: 'Add a project directory whose .mcp.json is a config source, then sync.',
    params: Type.Object({ directory: Type.String({ minLength: 1, maxLength: 4096, pattern: '^/' }) }, { additionalProperties: false }),
    result: SourcesView,
    errors: ['INVALID_PARAMS', 'STORAGE_FAILED'],
  }),
  'sources.removeProject': method({
    summary: 'Remove a project directory from the config sources, then sync (its services are removed).',
    params: Type.Object({ directory: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
    result: SourcesView,
    errors: ['INVALID_PARAMS', 'STORAGE_FAILED'],
  }),
  'services.import': method({
    summary:
      'One-off import of a Claude-Desktop-style (mcpServers) or VS Code-style (servers) file: each entry becomes a service registered by hand (disabled). ' +
      'Env and header values go to the secret store (storage), never into mcp-servers.json. ${VAR} expands from the daemon\'s environment.',
    params: Type.Object(
      {
        content: Type.String({ maxLength: 1024 * 1024, description: 'The file\'s text.' }),
        file: Type.Optional(Type.String({ maxLength: 4096, description: 'Where it came from, for messages.' })),
        storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      imported: Type.Array(Service),
      skipped: Type.Array(Type.Object({ name: Type.String(), reason: Type.String() })),
      warnings: Type.Array(Type.String()),
    }),
    errors: ['INVALID_PARAMS', 'LIMIT_EXCEEDED', 'KEYCHAIN_UNAVAILABLE', 'STORAGE_FAILED'],
  }),
} as const satisfies Record<string, MethodDef>;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type Params<M extends MethodName> = Static<Methods[M]['params']>;
export type Result<M extends MethodName> = Static<Methods[M]['result']>;

function event<T extends string, P extends Record<string, TSchema>>(type: T, summary: string, payload: P) {
  return Type.Object(
    { seq: Type.Integer({ minimum: 1 }), type: Type.Literal(type), at: Timestamp, ...payload },
    { description: summary },
  );
}

export const events = {
  'service.registered': event('service.registered', 'A service was registered (disabled).', { service: Service }),
  'service.updated': event('service.updated', 'A service was edited (and so disabled).', { service: Service }),
  'service.deleted': event('service.deleted', 'A service was removed.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
  }),
  'service.state': event('service.state', 'A service\'s connection state changed.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    connection: ConnectionState,
  }),
  'service.tools': event('service.tools', 'A service\'s tools were discovered (at activation, on list_changed or refresh).', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    toolListVersion: Type.Integer(),
    toolCount: Type.Integer(),
  }),
  'service.login': event('service.login', 'An OAuth login waits for the human: open the authorization URL in a browser.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    authorizationUrl: Type.String(),
    redirectUri: Type.String({ description: 'The loopback listener (127.0.0.1) that receives the callback.' }),
  }),
  'approval.requested': event('approval.requested', 'A call waits for a human: any attached client may answer.', { approval: Approval }),
  'approval.resolved': event('approval.resolved', 'An approval was approved, denied, cancelled or made stale.', { approval: Approval }),
  'tool.call.started': event('tool.call.started', 'An approved call was sent to its server.', { call: CallRef }),
  'tool.call.finished': event('tool.call.finished', 'A call succeeded. The result itself goes only to the caller.', {
    call: CallRef,
    durationMs: Type.Integer(),
    truncated: Type.Boolean(),
  }),
  'tool.call.failed': event('tool.call.failed', 'A call failed (denied, stale, error, timeout, cancelled, server gone).', {
    call: Type.Object({
      callId: Type.String(),
      approvalId: Type.Union([Type.String(), Type.Null()]),
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      toolName: Type.String(),
      modelName: Type.String(),
      argumentsDigest: Type.String(),
      requester: Requester,
    }),
    code: Type.String(),
    message: Type.String(),
    durationMs: Type.Integer(),
  }),
  'session.created': event('session.created', 'A session was created.', { session: SessionInfo }),
  'session.deleted': event('session.deleted', 'A session was deleted.', { sessionId: Type.String() }),
  'task.state': event('task.state', 'A task started, waits for an approval, runs again, or ended.', { sessionId: Type.String(), task: Task }),
  'model.delta': event('model.delta', 'A piece of the model\'s answer (content) or of its reasoning, as it streams.', {
    sessionId: Type.String(),
    taskId: Type.String(),
    round: Type.Integer(),
    kind: Type.Union([Type.Literal('content'), Type.Literal('reasoning')]),
    text: Type.String(),
  }),
  'model.turn': event('model.turn', 'A model turn ended: its finish reason, usage and the tool calls it proposed.', {
    sessionId: Type.String(),
    taskId: Type.String(),
    round: Type.Integer(),
    finishReason: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    toolCalls: Type.Array(Type.Object({ id: Type.String(), modelName: Type.String(), arguments: Type.String() })),
  }),
  'install.progress': event('install.progress', 'An install moved to a step (for progress bars); pid is npm\'s process while npm runs.', {
    install: Type.Object({ digest: Type.String(), package: Type.String(), version: Type.String() }),
    step: InstallStep,
    index: Type.Integer({ minimum: 1 }),
    total: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal('started'), Type.Literal('done')]),
    pid: Type.Union([Type.Integer(), Type.Null()]),
  }),
  'install.finished': event('install.finished', 'An install attempt ended (succeeded, failed, cancelled, timed out) or reused an earlier success.', {
    attempt: Type.Omit(InstallAttempt, ['logTail']),
  }),
  'storage.warning': event(
    'storage.warning',
    'A persisted file, or a record in it, was bad when read (at start): the record was skipped or the file moved aside intact, and the daemon went on.',
    {
      file: Type.String({ description: 'The file that was read.' }),
      problem: Type.String({ description: 'What was wrong and what was done (never the file\'s content).' }),
      movedTo: Type.Union([Type.String(), Type.Null()], { description: 'Where the bad file now is, intact; null when it stayed in place.' }),
    },
  ),
  'daemon.stopping': event('daemon.stopping', 'The daemon is shutting down; connections close next.', {}),
  'daemon.recovered': event('daemon.recovered', 'At start: the MCP servers a crashed run left running (recorded in the runtime dir) were stopped. A recorded pid that now belongs to another process (its start time differs) is left alone.', {
    servers: Type.Array(
      Type.Object({
        serviceId: Type.String(),
        name: Type.String(),
        pid: Type.Integer({ description: 'The server\'s leader, which was also its process group.' }),
        outcome: Type.Union([Type.Literal('stopped'), Type.Literal('gone'), Type.Literal('not_ours')]),
      }),
    ),
  }),
} as const;

export type EventType = keyof typeof events;
export type WispEvent = { [K in EventType]: Static<(typeof events)[K]> }[EventType];
/** An event before the daemon stamps it with seq and time. */
export type EventPayload = { [K in EventType]: Omit<Static<(typeof events)[K]>, 'seq' | 'at'> }[EventType];

/** The OpenRPC document served by rpc.discover (and rendered into docs/protocol.md). */
export function openRpcDocument(version: string): { openrpc: string } & Record<string, unknown> {
  const json = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));
  return {
    openrpc: '1.3.2',
    info: {
      title: 'wispd control protocol',
      version,
      description:
        'JSON-RPC 2.0 over a Unix domain socket, one JSON message per line (max 1 MB per line). ' +
        'Application errors use code -32000 with a stable string code in error.data.code.',
    },
    methods: Object.entries(methods).map(([name, def]) => ({
      name,
      summary: def.summary,
      paramStructure: 'by-name',
      params: Object.entries((def.params as { properties?: Record<string, TSchema> }).properties ?? {}).map(
        ([param, schema]) => ({
          name: param,
          required: ((def.params as { required?: string[] }).required ?? []).includes(param),
          schema: json(schema),
        }),
      ),
      result: { name: 'result', schema: json(def.result) },
      errors: def.errors.map((code) => ({
        code: ERROR_CATALOG[code].rpcCode,
        message: code,
        data: { code },
      })),
    })),
    components: {
      schemas: {
        Service: json(Service),
        ConnectionState: json(ConnectionState),
        ToolInfo: json(ToolInfo),
        Approval: json(Approval),
        ToolCallResult: json(ToolCallResult),
        DaemonStatus: json(DaemonStatus),
        InstallPlan: json(InstallPlanView),
        InstallAttempt: json(InstallAttempt),
      },
    },
    'x-events': Object.fromEntries(Object.entries(events).map(([type, schema]) => [type, json(schema)])),
    'x-errors': Object.fromEntries(
      ERROR_CODES.map((code) => [code, { rpcCode: ERROR_CATALOG[code].rpcCode, description: ERROR_CATALOG[code].description }]),
    ),
    'x-limits': LIMITS,
  };
}
