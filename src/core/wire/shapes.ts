/**
 * The shared shapes of the control protocol (connection states, services, tools, approvals,
 * tasks, sessions): what replies, events and persisted records are made of. Each is defined
 * once, here; the areas take their types from these (Static), never a second copy.
 *
 * Everything here is sent over the socket: changes must be additive.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { LIMITS } from '../limits.js';
import { ENV_NAME_PATTERN, SERVICE_NAME_PATTERN } from '../patterns.js';
import { SandboxState } from './sandbox-shapes.js';

/**
 * A `code` field: one of the catalog's codes (docs/errors.md). Replies, events and
 * persisted records carry no other; a record read from disk with another is refused.
 */
export const ErrorCodeSchema = Type.Unsafe<ErrorCode>(Type.String({ enum: [...ERROR_CODES], description: 'An error code from the catalog (docs/errors.md).' }));

export const NoParams = Type.Object({}, { additionalProperties: false });
export const Timestamp = Type.String({ description: 'ISO 8601 UTC timestamp' });
export const NoNul = '^[^\\u0000]*$';

export const ServiceName = Type.String({
  pattern: SERVICE_NAME_PATTERN,
  description: 'Unique; 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit.',
});
export const Command = Type.String({
  minLength: 1,
  maxLength: LIMITS.maxCommandChars,
  pattern: NoNul,
  description: 'Executable: an absolute path, or a bare name looked up on the daemon\'s PATH at activation. Never shell text.',
});
export const Args = Type.Array(Type.String({ maxLength: LIMITS.maxCommandChars, pattern: NoNul }), {
  maxItems: LIMITS.maxArgs,
  description: 'Arguments passed to the program item by item; no shell ever parses them.',
});
export const Cwd = Type.String({
  minLength: 1,
  maxLength: LIMITS.maxCommandChars,
  pattern: NoNul,
  description: 'Absolute working directory (a relative one is refused with INVALID_CONFIG). Sandboxed, it is the one path the server may write besides its grants.',
});

export const TimeoutMs = Type.Integer({
  minimum: 100,
  maximum: 600_000,
  description: 'Per-service timeout in ms: initialize + discovery together, and each tool call (a progress notification from the server starts its wait again, within the 10-minute cap on any call). Default 10000.',
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
      server: Type.Object(
        {
          name: Type.String(),
          version: Type.String(),
          protocolVersion: Type.String({ description: "The MCP revision this connection speaks: 2025-11-25 (or an earlier 2025 one, the server's choice at initialize) or 2026-07-28." }),
        },
        { description: 'What the server says it is (name, version: untrusted), and the protocol revision spoken.' },
      ),
      since: Timestamp,
    }),
    Type.Object({
      status: Type.Literal('failed'),
      generation: Generation,
      code: ErrorCodeSchema,
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

export const EnvName = Type.String({ pattern: ENV_NAME_PATTERN, maxLength: 128 });
export const Storage = Type.Union([Type.Literal('keychain'), Type.Literal('session')], {
  description: 'keychain: the OS keychain; session: memory only, gone when the daemon stops.',
});
export type Storage = Static<typeof Storage>;
const EnvVariable = Type.Object(
  {
    name: EnvName,
    storage: Storage,
    plain: Type.Optional(
      Type.Boolean({
        description:
          'true: the value is no secret (a path, a number or one word, under a name that names no secret): kept in the store all the same, never redacted, ' +
          'so an approval shows arguments that hold it as they are sent. Absent: a secret.',
      }),
    ),
  },
  { description: 'A variable\'s name and where its value is kept. Values are write-only.' },
);

/** OAuth beyond the authorization code flow (services.registerRemote, the service view). The secrets they need are write-only. */
export const OAuthFlowProps = {
  grant: Type.Optional(
    Type.Union([Type.Literal('client_credentials'), Type.Literal('cross_app')], {
      description: 'Without: the authorization code flow. client_credentials: the client itself; cross_app: an identity assertion exchanged at the IdP (RFC 8693) for an ID-JAG, then for an access token (RFC 7523).',
    }),
  ),
  clientAuth: Type.Optional(Type.Union([Type.Literal('client_secret_basic'), Type.Literal('private_key_jwt')], { description: 'How the pre-registered client authenticates at the token endpoint.' })),
  signingAlg: Type.Optional(Type.Union(['ES256', 'ES384', 'RS256', 'RS384', 'RS512', 'PS256', 'EdDSA'].map((alg) => Type.Literal(alg)), { description: 'private_key_jwt: the key\'s algorithm.' })),
  clientMetadataUrl: Type.Optional(Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2048, description: 'A Client ID Metadata Document URL, used as the client id where the authorization server supports it.' })),
  idpTokenEndpoint: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048, description: 'cross_app: the identity provider\'s token endpoint.' })),
  idpClientId: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'cross_app: our client id at the identity provider.' })),
};

const Template = Type.Object({ name: Type.String(), template: Type.String({ description: 'As written, `${VAR}` kept.' }) });

export const Service = Type.Object({
  id: Type.String({ description: 'Stable UUID assigned at registration.' }),
  name: ServiceName,
  transport: Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')], {
    description: 'stdio: a local program; http: a remote streamable-HTTP endpoint; sse: a remote server on the legacy HTTP+SSE transport (GET stream, POST endpoint).',
  }),
  command: Type.String({ description: 'stdio: the program. http: empty.' }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'http: the endpoint. stdio: null.' }),
  headers: Type.Array(EnvVariable, { description: 'http: header names and where their values are kept. Values are write-only.' }),
  oauth: Type.Union([Type.Object({ enabled: Type.Boolean(), clientId: Type.Union([Type.String(), Type.Null()]), scopes: Type.Union([Type.String(), Type.Null()]), ...OAuthFlowProps }), Type.Null()], {
    description: 'http: OAuth login (authorization code + PKCE; tokens in the keychain). null: none.',
  }),
  args: Type.Array(Type.String()),
  cwd: Type.Union([Type.String(), Type.Null()]),
  timeoutMs: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the default (10000).' }),
  env: Type.Array(EnvVariable, { description: 'Names and storage only: values are never sent back.' }),
  fromEnvironment: Type.Array(EnvName, {
    description:
      'Variables of the daemon\'s own environment that `${VAR}` in command, args or url take at launch (config sources and imports). command, args and url are shown as written, templates kept; the values are never stored or sent. environmentReads lists every variable a launch reads, env and header templates included.',
  }),
  envTemplates: Type.Array(Template, {
    description: 'stdio: variables whose value is written with `${VAR}` (config sources and imports): shown as written, filled in from the daemon\'s environment at launch.',
  }),
  headerTemplates: Type.Array(Template, { description: 'http: headers whose value is written with `${VAR}`: shown as written, filled in at launch.' }),
  environmentReads: Type.Array(
    Type.Object({
      field: Type.String({ description: 'Where the `${VAR}` is written: command, args[N], url, env.NAME or headers.NAME.' }),
      variable: EnvName,
      secret: Type.Boolean({ description: 'false: a public variable (HOME, USER, PATH, TMPDIR, ...), shown as it is; true: its value is redacted wherever it appears.' }),
      file: Type.Union([Type.String(), Type.Null()], { description: 'The file it is written in (the service\'s origin); null when none is known.' }),
    }),
    { description: 'Every `${VAR}` a launch reads from the daemon\'s environment, field by field: what a trust prompt shows. Never the daemon\'s own variables (DEEPSEEK_API_KEY, WISP_*): those are refused.' },
  ),
  sandbox: SandboxState,
  media: Type.Boolean({
    description: 'Whether images, audio and binary resources of this service pass whole to gateway clients (mcp serve) that render them; false (the default): they become markers, as for every other caller. Shown at trust; changing it is an edit.',
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
      Type.Object({ kind: Type.Literal('import'), file: Type.String(), at: Type.String() }),
    ],
    {
      description:
        'manual: registered by hand; install: registered by a verified npm install of that plan; source: synced from a config file (edit the file and reload, not the service); import: copied once from a file by services.import (editable, never synced).',
    },
  ),
  enabled: Type.Boolean({ description: 'True while activating or active. Every edit and every daemon restart disables a service.' }),
  heldTools: Type.Integer({
    minimum: 0,
    description:
      'How many of its tools are held (changed or added since they were trusted): listed, never offered to a model or callable until reviewed (tools.review, tools.accept; wispctl mcp review NAME). 0 unless active. connection.toolCount counts them too.',
  }),
  configVersion: Type.Integer({ minimum: 1, description: 'Bumped on every edit; a trust decision is bound to it.' }),
  connection: ConnectionState,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Service = Static<typeof Service>;

export const ServiceRefProps = {
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Service id. Give id or name, not both.' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Service name. Give id or name, not both.' })),
};
export const ServiceRef = Type.Object(ServiceRefProps, { additionalProperties: false });

/**
 * A tool against its pin (the definition trusted when the service was first discovered after
 * activation): trusted (the same in every detail), changed, or added. changed and added are
 * held: listed for humans, never given to a model, never callable (TOOL_NOT_TRUSTED) until
 * accepted (tools.review, tools.accept).
 */
const PinStatus = Type.Union([Type.Literal('trusted'), Type.Literal('changed'), Type.Literal('added')], {
  description: 'trusted: matches its pin. changed, added: held until accepted (tools.accept); only trusted tools reach models and calls.',
});
export type PinStatus = Static<typeof PinStatus>;

/** A fact about a tool's text a human should see before trusting it (never a verdict). */
export const ToolWarning = Type.Object({
  kind: Type.Unsafe<'tag_characters' | 'zero_width' | 'bidi_control' | 'names_other_tool'>(Type.String({ enum: ['tag_characters', 'zero_width', 'bidi_control', 'names_other_tool'] })),
  field: Type.String({ description: 'Where: a JSON pointer into the definition (/description, /inputSchema/properties/x/description...).' }),
  message: Type.String({ description: 'The fact, in words (may quote a tool name: untrusted text).' }),
});
export type ToolWarning = Static<typeof ToolWarning>;

/** A tool's icon as the server gave it, once checked (mcp/tool-extras.ts). */
export const ToolIcon = Type.Object({
  src: Type.String({ description: 'An https: URL or a data: URI of a PNG, JPEG, GIF or WebP image.' }),
  mimeType: Type.Union([Type.String(), Type.Null()]),
  sizes: Type.Union([Type.Array(Type.String()), Type.Null()]),
  theme: Type.Union([Type.Literal('light'), Type.Literal('dark'), Type.Null()]),
});
export type ToolIcon = Static<typeof ToolIcon>;

export const ToolInfo = Type.Object({
  serviceId: Type.String(),
  serviceName: Type.String(),
  name: Type.String({ description: 'The server\'s own tool name: untrusted text.' }),
  modelName: Type.String({ description: 'Stable name for model APIs, from the service id and a digest of the tool name.' }),
  title: Type.Union([Type.String(), Type.Null()]),
  description: Type.String({ description: 'Untrusted text from the server.' }),
  inputSchema: Type.Object({}, { additionalProperties: true }),
  annotations: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Untrusted hints: shown, never obeyed.' }),
  outputSchema: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: 'The server\'s output schema, when Wisp compiled it and checks every result\'s structuredContent against it; null when the tool has none, or one Wisp could not compile (then nothing is checked).',
  }),
  icons: Type.Array(ToolIcon, { maxItems: 8, description: 'The server\'s icons that passed Wisp\'s checks (https: or data: image URIs, bounded); others are dropped.' }),
  meta: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The tool\'s _meta: untrusted, at most 4 KB of JSON; null when it had none or more.' }),
  generation: Generation,
  toolListVersion: Type.Integer(),
  pin: PinStatus,
  unavailable: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the tool cannot be called (it requires MCP tasks: execution.taskSupport "required"); null when it can. An unavailable tool is listed here only: models and MCP clients are not offered it, and a call is refused TOOL_UNAVAILABLE before any approval.',
  }),
});
export type ToolInfo = Static<typeof ToolInfo>;
export type ServiceRef = Static<typeof ServiceRef>;

export const Requester = Type.Object({
  clientId: Type.String({ description: 'The socket connection that asked.' }),
  sessionId: Type.Union([Type.String(), Type.Null()]),
  taskId: Type.Union([Type.String(), Type.Null()]),
});

export type Requester = Static<typeof Requester>;

/** pending -> approved -> consumed, or denied | cancelled | stale (core/approval-state.ts moves it). */
export const ApprovalState = Type.Union([
  Type.Object({ status: Type.Literal('pending') }),
  Type.Object({ status: Type.Literal('approved'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('consumed'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('denied'), by: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('cancelled'), reason: Type.String(), at: Timestamp }),
  Type.Object({ status: Type.Literal('stale'), reason: Type.String(), at: Timestamp }),
]);
export type ApprovalState = Static<typeof ApprovalState>;

const approvalKind = Type.Union([Type.Literal('tool_call'), Type.Literal('host_tool'), Type.Literal('registration'), Type.Literal('activation'), Type.Literal('install'), Type.Literal('network.connect')], {
  description:
    'tool_call: a third-party tool; host_tool, registration, activation: the model\'s host tools; install: an npm install plan (installs.start or the model\'s mcp_install_npm); ' +
    'network.connect: a sandboxed service whose network is ask connecting to a host and port no grant covers (its connection waits for the answer; requester.clientId is service:NAME).',
});
const approvalBinding = Type.Record(Type.String(), Type.Union([Type.String(), Type.Integer()]), {
  description:
    'What the approval is bound to; a use that differs in any key is refused. tool_call: serviceId, generation, toolListVersion, toolName, ' +
    'argumentsDigest (sha256 of the canonical arguments). activation: serviceId, configVersion. registration and host_tool: tool, argumentsDigest. install: planDigest. network.connect: serviceId, host (canonical: lowercase, an IPv6 address without brackets), port.',
});

export const Approval = Type.Object({
  id: Type.String(),
  kind: approvalKind,
  requester: Requester,
  binding: approvalBinding,
  summary: Type.Object({
    serviceName: Type.String(),
    toolName: Type.String(),
    modelName: Type.String(),
    title: Type.Union([Type.String(), Type.Null()]),
    arguments: Type.Object({}, { additionalProperties: true, description: 'Exactly what will be sent if approved.' }),
    annotations: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Untrusted hints: shown, never obeyed.' }),
    warnings: Type.Optional(Type.Array(ToolWarning, { description: 'tool_call: hidden or direction-changing characters in the tool\'s definition, or names of other services\' tools in it.' })),
  }),
  createdAt: Timestamp,
  state: ApprovalState,
});
export type Approval = Static<typeof Approval>;

/** What became of an approval, without what was shown (its summary: the arguments may be large); the summary came with approval.requested and stays in approvals.get. */
export const ApprovalOutcome = Type.Object(
  { id: Type.String(), kind: approvalKind, requester: Requester, binding: approvalBinding, createdAt: Timestamp, state: ApprovalState },
  { description: 'An approval without its summary.' },
);
export type ApprovalOutcome = Static<typeof ApprovalOutcome>;
/** tool_call: a third-party tool; host_tool: a read of the daemon's state for the model; registration and activation: the model's host tools that change it; install: an npm install. */
export type ApprovalKind = Approval['kind'];
/** What an approval is bound to: exactly what the human was shown, compared key by key. */
export type Binding = Approval['binding'];
/** What the human is shown: the exact arguments that will be sent, and the server's (untrusted) hints. */
export type ApprovalSummary = Approval['summary'];

/** A caller that renders media asks for it (the gateway): honoured only for a service whose media setting is on. */
export const MediaWanted = Type.Boolean({ description: 'Pass images, audio and binary resources whole, where the service\'s media setting allows it (otherwise, and by default, markers).' });

export const ResultContent = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({ type: Type.Literal('resource'), uri: Type.String(), mimeType: Type.Union([Type.String(), Type.Null()]), text: Type.String() }),
  Type.Object(
    { type: Type.Union([Type.Literal('image'), Type.Literal('audio')]), mimeType: Type.String(), data: Type.String({ description: 'base64' }) },
    { description: 'Only to a caller that asked for media (the gateway), from a service whose media setting is on; otherwise an omitted marker.' },
  ),
  Type.Object(
    { type: Type.Literal('blob'), uri: Type.String(), mimeType: Type.Union([Type.String(), Type.Null()]), blob: Type.String({ description: 'base64' }) },
    { description: 'A binary resource, passed as media is (see image); otherwise an omitted marker.' },
  ),
  Type.Object(
    {
      type: Type.Literal('omitted'),
      originalType: Type.String({ description: 'image, audio, resource (binary), resource_link, or an unknown type.' }),
      mimeType: Type.Union([Type.String(), Type.Null()]),
      bytes: Type.Union([Type.Integer(), Type.Null()]),
      uri: Type.Union([Type.String(), Type.Null()], { description: 'Never opened.' }),
      name: Type.Union([Type.String(), Type.Null()], { description: 'A resource_link\'s name (untrusted text); null for other types.' }),
    },
    { description: 'Content that is never passed on: a marker with its type and size.' },
  ),
]);

export const ToolCallResult = Type.Object({
  callId: Type.String(),
  approvalId: Type.String(),
  content: Type.Array(ResultContent),
  structuredContent: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description:
      'The server\'s structured content, its binaries replaced by markers ("[omitted by Wisp: binary, N bytes]": data: URIs, the data or blob beside a mimeType, and strings of 256+ base64 characters). Null when there was none, or when its JSON is over 32,000 characters (see structuredOmitted).',
  }),
  structuredOmitted: Type.Union([Type.Object({ characters: Type.Integer({ description: 'Characters of its JSON (binaries already replaced).' }), reason: Type.String() }), Type.Null()], {
    description: 'Why the structured content was left out (over the 32,000-character cap: a cut JSON object is no object); null when it is given or there was none.',
  }),
  text: Type.String({ description: 'The text parts joined, capped at 32,000 characters.' }),
  truncated: Type.Boolean({ description: 'Something was cut: the text (originalLength is over text\'s length), or the structured content (structuredOmitted).' }),
  originalLength: Type.Integer({ description: 'Characters of text before the cap.' }),
  durationMs: Type.Integer({ description: 'Milliseconds from sending the call to its server until its answer (0 when it was never sent).' }),
  waitedMs: Type.Integer({ description: 'Milliseconds from the request until the call was sent (or ended unsent): mostly the wait for a human\'s approval.' }),
});
export type ToolCallResult = Static<typeof ToolCallResult>;

export const CallRef = Type.Object({
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
  Type.Object({ status: Type.Literal('failed'), code: ErrorCodeSchema, message: Type.String() }),
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

const ToolCallWire = Type.Object({ id: Type.String(), type: Type.Literal('function'), function: Type.Object({ name: Type.String(), arguments: Type.String() }) });
export type ToolCallWire = Static<typeof ToolCallWire>;

/**
 * A message of a session's transcript, exactly as sent to the model (the chat-completions
 * format): what sessions/<id>.jsonl holds and model/ sends. The one definition of it.
 */
export const ChatMessage = Type.Union([
  Type.Object({ role: Type.Literal('user'), content: Type.String() }),
  Type.Object({
    role: Type.Literal('assistant'),
    content: Type.Union([Type.String(), Type.Null()]),
    reasoning_content: Type.Optional(Type.String({ description: 'Sent back in later requests: thinking mode with tools requires it.' })),
    tool_calls: Type.Optional(Type.Array(ToolCallWire)),
  }),
  Type.Object({ role: Type.Literal('tool'), tool_call_id: Type.String(), content: Type.String() }),
]);
export type ChatMessage = Static<typeof ChatMessage>;

/**
 * How sessions.get shows a ChatMessage: the same fields, flattened into one object (the
 * protocol's shape since version 1, which clients read field by field). Every ChatMessage is
 * one (checked at compile time below).
 */
export const TranscriptMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
    content: Type.Union([Type.String(), Type.Null()]),
    reasoning_content: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCallWire)),
    tool_call_id: Type.Optional(Type.String()),
  },
  { description: 'A message as sent to the model.' },
);
export type TranscriptMessage = Static<typeof TranscriptMessage>;
/** Compiles only while every ChatMessage is a TranscriptMessage (so sessions.get needs no cast). */
type Holds<T extends true> = T;
export type EveryChatMessageIsShown = Holds<ChatMessage extends TranscriptMessage ? true : false>;

export const ModelSettingsView = Type.Object({
  baseUrl: Type.String(),
  model: Type.String(),
  firstByteTimeoutMs: Type.Integer(),
  idleTimeoutMs: Type.Integer(),
  maxRetries: Type.Integer(),
  deferToolsAbove: Type.Integer({ description: 'Above this many active tools, a task offers search and execute instead of every tool.' }),
  key: Type.Union([Type.Literal('keychain'), Type.Literal('session'), Type.Literal('environment'), Type.Literal('none')], {
    description:
      'Where the API key used now comes from (its value is never shown), first match wins: a session key set in this daemon run, a key saved in the keychain, the daemon\'s DEEPSEEK_API_KEY; none.',
  }),
});
export type ModelSettingsView = Static<typeof ModelSettingsView>;

