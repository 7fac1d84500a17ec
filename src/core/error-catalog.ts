/**
 * The one catalog of error codes. Every error that crosses the socket carries one of these
 * in `error.data.code`, and so does every `code` field of a reply, an event or a persisted
 * record (a connection that failed, a task, an install attempt, a registry that could not be
 * loaded): those fields are typed by this catalog. wispctl maps codes to exit statuses.
 * Codes are part of the public protocol: add, never rename or remove. docs/errors.md is
 * generated from this table and a test keeps the two in step (and checks that every code
 * the source can send is here).
 *
 * Wire and local codes: most codes cross the socket. A few never do, and are marked
 * `wire: false`: they are raised where no daemon answers (DAEMON_NOT_RUNNING, made by the
 * client) or before the daemon listens (ALREADY_RUNNING, PATH_TOO_LONG, UNSAFE_DIRECTORY:
 * wispd prints them and exits). They share the catalog because wispctl and wispd report
 * them the same way (message, code, exit status), but no method may declare one and no
 * wire field carries one in practice.
 */

/** JSON-RPC 2.0 reserved codes, plus the one code we use for every application error. */
export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;
export const JSONRPC_APPLICATION_ERROR = -32000;

/** wispctl exit statuses. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  noDaemon: 3,
  notFound: 4,
  conflict: 5,
  limit: 6,
  refused: 7,
} as const;

export interface CatalogEntry {
  readonly rpcCode: number;
  readonly exit: number;
  readonly description: string;
  /** false: a local code, never sent over the socket (see the header). Absent: a wire code. */
  readonly wire?: false;
}

export const ERROR_CATALOG = {
  PARSE_ERROR: {
    rpcCode: JSONRPC_PARSE_ERROR,
    exit: EXIT.failure,
    description: 'The frame was not valid UTF-8 JSON.',
  },
  INVALID_REQUEST: {
    rpcCode: JSONRPC_INVALID_REQUEST,
    exit: EXIT.failure,
    description: 'The frame was JSON but not a JSON-RPC 2.0 request (missing "jsonrpc":"2.0", bad id or method).',
  },
  METHOD_NOT_FOUND: {
    rpcCode: JSONRPC_METHOD_NOT_FOUND,
    exit: EXIT.failure,
    description: 'No method of that name. rpc.discover lists every method.',
  },
  INVALID_PARAMS: {
    rpcCode: JSONRPC_INVALID_PARAMS,
    exit: EXIT.usage,
    description: 'The params failed the method\'s schema; data.errors lists each failure (path and message).',
  },
  INTERNAL_ERROR: {
    rpcCode: JSONRPC_INTERNAL_ERROR,
    exit: EXIT.failure,
    description: 'A bug in the daemon. The daemon log has the details; the request had no effect unless stated.',
  },
  FRAME_TOO_LARGE: {
    rpcCode: JSONRPC_INVALID_REQUEST,
    exit: EXIT.failure,
    description: 'A frame (one line) exceeded the 1 MB limit: on the control socket the daemon answers once with this error and closes that connection; from an MCP server it fails the connection. A remote server\'s OAuth metadata or token response over 1 MB fails the login (or the activation that asked where to log in) with it, read no further.',
  },
  SLOW_CONSUMER: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The client stopped reading and its unread output passed the limit; the daemon dropped the connection.',
  },
  CANCELLED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The work was cancelled: its client disconnected, its service was stopped or edited, or the daemon is stopping. A cancelled tool call closes that service\'s connection.',
  },
  DAEMON_STOPPING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The daemon is shutting down and accepts no new work.',
  },
  DAEMON_NOT_RUNNING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    wire: false,
    exit: EXIT.noDaemon,
    description: 'Client side: nothing answers on the socket. Start the daemon with `wispctl daemon start`.',
  },
  ALREADY_RUNNING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    wire: false,
    exit: EXIT.conflict,
    description: 'Startup: another wispd already owns this data directory or socket (its pid and socket are named).',
  },
  PATH_TOO_LONG: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    wire: false,
    exit: EXIT.usage,
    description: 'Startup: the socket path (a client checks it too, before it connects) is longer than the platform allows (107 bytes on Linux, 103 on macOS). Use a shorter --data-dir or --socket.',
  },
  UNSAFE_DIRECTORY: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    wire: false,
    exit: EXIT.refused,
    description: 'Startup: something that is not a socket is in the way of the socket path. (A directory that is not private is UNSAFE_FILE.)',
  },
  UNSAFE_FILE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Startup or file access: a file or directory the daemon uses is not owned by you, is writable by group or others, or is a symlink. The message names the path and what is wrong; nothing was read from it. Fix or remove it, then start again.',
  },
  REPLY_TOO_LARGE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The answer to a request (or an event) could not be sent: it could not be serialised or was larger than the 1 MB frame limit. The connection and the daemon go on; narrow the request (for example page through a list).',
  },
  SERVICE_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No service with that id or name.',
  },
  SERVICE_NAME_TAKEN: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'Another service already has that name (names are unique).',
  },
  VERSION_CONFLICT: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'services.update named a configVersion that is no longer current: someone else edited the service. Fetch it again.',
  },
  INVALID_CONFIG: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.usage,
    description: 'The service configuration is not acceptable (for example a relative cwd); the message says which field.',
  },
  LIMIT_EXCEEDED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.limit,
    description: 'A documented limit would be exceeded (for example a 17th service, or a 65th waiting call of one client); data.limit and data.max say which. ' +
      'On the control socket a connection over maxConnections (or a gateway\'s over maxConnectionsPerGateway or maxGatewayConnections), ' +
      'and one whose unfinished frame would pass the shared maxHeldFrameBytes, gets it once (id null) and is closed.',
  },
  EVENTS_UNAVAILABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'events.subscribe: `since` is ahead of the daemon\'s newest event.',
  },
  STORAGE_FAILED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The daemon could not write its data directory (disk full, permissions). Nothing was changed.',
  },
  APPROVAL_STALE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'The decision was bound to something that has changed since it was shown: for activation, the service was edited; for a tool call, its tool list or connection changed (or other arguments were sent); for tools.accept, the tool list changed since the version reviewed, or a tool\'s definition is not the one reviewed (its digest differs). Show it again and ask again.',
  },
  SERVICE_BUSY: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'The service is activating or stopping; wait for it to settle (see its state) and try again.',
  },
  SERVICE_NOT_ACTIVE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The request needs an active service (for example services.refreshTools) and this one is not.',
  },
  COMMAND_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'Activation: the command does not exist, or a bare name is not on the daemon\'s PATH (which differs from a terminal\'s). Register it by absolute path.',
  },
  COMMAND_NOT_EXECUTABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'Activation: the command is not an executable file.',
  },
  CWD_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'Activation: the working directory does not exist or is not a directory.',
  },
  SANDBOX_UNAVAILABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Activation: the service is sandboxed and the sandbox cannot be had here (Linux: no bwrap in /usr/bin, /bin or /usr/local/bin, or user namespaces are disabled; macOS: no /usr/bin/sandbox-exec; another OS). Nothing ran: a sandboxed service never falls back to running unsandboxed. Install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), enable user namespaces, or turn the sandbox off for this service (wispctl mcp sandbox NAME --off), which gives it every file and the network you have.',
  },
  NETWORK_GRANTS_UNSUPPORTED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Activation: the service is granted network hosts (or asks for them), which go through the daemon\'s egress proxy, and only the Linux sandbox (bubblewrap) can bridge a server to it for now. On macOS such a service does not start: give it no network (wispctl mcp sandbox NAME --net none) or, knowing it can then reach any host, all of it (--net all).',
  },
  SPAWN_FAILED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'Activation: the operating system refused to start the program; the message says why.',
  },
  TIMEOUT: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The server did not answer in time (initialize plus tool discovery share one deadline, 10 s by default). Only our own deadline: a server\'s error with code -32001 is its answer (TOOL_ERROR).',
  },
  SERVER_EXITED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The server process exited or closed its pipes (never a server\'s JSON-RPC error, whatever its code). It is never restarted automatically.',
  },
  PROTOCOL_ERROR: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The server broke the MCP protocol: non-JSON-RPC output on stdout, a malformed answer, a failed request, pages that never end, duplicate tool names.',
  },
  SCHEMA_INVALID: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'A tool\'s input schema does not compile (JSON Schema 2020-12, or draft-07 when its $schema says so), or it refers to an external $ref (schemas are never fetched). The message names the tool.',
  },
  TOOL_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No active tool by that model name (or service and tool name). tools.list shows the catalog.',
  },
  TOOL_NOT_TRUSTED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The tool is held: it changed, or appeared, since the service\'s tools were pinned, and no human has accepted it yet. Nothing was asked or sent. Review it (tools.review, wispctl mcp review) and accept it (tools.accept).',
  },
  TOOL_UNAVAILABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The tool cannot be called as its server defines it: it requires MCP tasks (execution.taskSupport "required"), which Wisp does not run yet. tools.list shows it with the reason in `unavailable`; models and MCP clients are not offered it. Nothing was asked or sent.',
  },
  INVALID_ARGUMENTS: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.usage,
    description: 'The call\'s arguments fail the tool\'s input schema; data.errors lists each failure. No approval was created and nothing was sent.',
  },
  APPROVAL_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No approval with that id (resolved approvals are kept for a while, then forgotten).',
  },
  APPROVAL_NOT_PENDING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'The approval was already answered (the first answer wins), cancelled or made stale; data.status says which.',
  },
  APPROVAL_DENIED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'A human denied the call. Nothing was sent to the server.',
  },
  TOOL_ERROR: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The tool ran and reported an error (isError: true; data.result holds what it said, normalised, capped), or the server answered the call with a JSON-RPC error, whatever its code (data.server holds its code and redacted message). The service stays active.',
  },
  KEYCHAIN_UNAVAILABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The OS keychain cannot be used (no Secret Service or D-Bus, locked, denied). Nothing was written in plain text; choose session-only storage or fix the keychain.',
  },
  SECRET_MISSING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Activation: some variables have no value (session-only values vanish when the daemon stops); data.names lists the ones to enter again.',
  },
  SECRET_BINDING_CHANGED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Activation: the command, args or cwd changed since these variables were saved (data.names). Set them again, or confirm the carry-over explicitly.',
  },
  ENV_NOT_ALLOWED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'A `${VAR}` of a config entry names a variable of the daemon\'s environment it may not read: the daemon\'s own (DEEPSEEK_API_KEY, DEEPSEEK_*, WISP_*), which never reaches a server, or (a project or plugin file) a variable you did not name for it (wispctl mcp sources add-project DIR --allow-env NAME). The entry is skipped (an already registered service naming one is refused at activation); data.variables lists them.',
  },
  SELF_GATEWAY: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The entry or service runs a Wisp gateway (`wispctl ... mcp serve`, what `wispctl mcp connect-client` writes into an MCP client\'s config): it serves Wisp\'s own services back to the daemon, so every tool-list change would echo between the two in a loop. It is a client of Wisp, never a server for it: an import or a config source skips it (with this code), registering one (mcp add, services.register, the model\'s mcp_register) or editing a service into one is refused, and one stored before that is refused at activation before anything runs. Remove it: wispctl mcp remove NAME.',
  },
  MODEL_NO_KEY: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'No model API key: set one with `wispctl model set-key` (kept in the keychain, or for this run only) or give the daemon DEEPSEEK_API_KEY.',
  },
  MODEL_AUTH: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The model API refused the key (HTTP 401).',
  },
  MODEL_BALANCE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The model API account has no balance left (HTTP 402).',
  },
  MODEL_RATE_LIMITED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model API is rate limiting (HTTP 429) and the retries before the stream started ran out.',
  },
  MODEL_UNAVAILABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model API could not be reached or failed (5xx, connection refused or reset, insufficient_system_resource).',
  },
  MODEL_BAD_REQUEST: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model API rejected the request (HTTP 400 or 422); the message carries its explanation.',
  },
  MODEL_STALLED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model stream went silent: nothing (not even a keep-alive) before the first-byte deadline, or no chunk within the idle timeout.',
  },
  MODEL_TRUNCATED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model stream ended without [DONE] (cut off mid-answer or mid-tool-call). Never retried once data has flowed.',
  },
  MODEL_PROTOCOL: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The model stream carried something that is not the chat-completions wire format (a malformed data line).',
  },
  SESSION_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No session with that id.',
  },
  TASK_RUNNING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'The session already has a task running; wait for it or cancel it (sessions.cancel).',
  },
  RUNTIME_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Installs: no Node.js and npm in the searched directories (/opt/homebrew/bin, /usr/local/bin, /usr/bin, /bin). npm 12 needs Node 22.22.2+ (or 24.15+, 26+): put both in one directory and name it with wispctl install settings --runtime-dir DIR, or install the server by hand and register it.',
  },
  NPM_TOO_OLD: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Installs: the npm found is older than 12, and npm 12 needs Node 22.22.2+ (or 24.15+, 26+). Put such a node and npm 12 in one directory and name it with wispctl install settings --runtime-dir DIR, or install the server by hand and register it.',
  },
  INVALID_PLAN: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.usage,
    description: 'Installs: the plan is refused: not a full package name, not an EXACT version (ranges, tags, URLs, git, file and directory specs are refused), or a bad bin name.',
  },
  PLAN_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'Installs: no plan or install attempt with that digest (plans live until the daemon stops: make it again with installs.plan).',
  },
  INSTALL_UNFINISHED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'Installs: an earlier attempt of this plan failed, was cancelled, timed out or was interrupted. It is never replayed: inspect its directory, discard it (wispctl install discard DIGEST), or install by hand and register.',
  },
  INSTALL_RUNNING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'Installs: that attempt is running (or queued); cancel it first.',
  },
  INSTALL_FAILED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'Installs: npm failed (see the attempt\'s log tail): a missing package or version, a refused git/URL/file dependency, a network error. A certificate error (a TLS-intercepting proxy) needs the proxy\'s CA: wispctl install settings --ca-file FILE.',
  },
  INSTALL_REJECTED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Installs: the lockfile failed verification (the offending entries are listed); npm ci was not run.',
  },
  INSTALL_BIN_INVALID: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'Installs: the requested bin does not exist, is not a JavaScript file, or points outside the package.',
  },
  SERVER_UNREACHABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'A remote (http) server could not be reached: connection refused, DNS, TLS. Nothing is retried on its own: check the URL, proxy and certificates, then activate again.',
  },
  SERVER_HTTP_ERROR: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'A remote (http) server answered with an HTTP error status.',
  },
  NEEDS_AUTH: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'A remote (http) server needs authorization: check its headers, or log in (wispctl mcp login NAME) when it uses OAuth.',
  },
  AUTH_FAILED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'An OAuth login failed: the callback\'s state did not match the login (refused), an issuer did not match (the callback\'s iss, RFC 9207, or the resource metadata\'s authorization server against that server\'s own metadata: the message names both), the authorization server denied access, or the code exchange failed.',
  },
  DESTINATION_REFUSED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'A remote server steered an OAuth request where the daemon does not send one, and nothing was sent: resource metadata off the server\'s own origin, an authorization, token or registration endpoint off its issuer\'s origin, or an address nearer to this machine than the service\'s own URL (loopback, link-local, private), judged on the addresses a name resolves to. The rule is in docs/security.md.',
  },
  CONNECTION_CLOSED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The connection to a remote (http) server closed while a request was under way (nothing exited: the server is elsewhere). Activate the service again.',
  },
  INTERRUPTED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The daemon stopped (or crashed) while the work ran: an install attempt found running at the next start ends interrupted (npm, if still running, is stopped). It is never replayed: discard it (wispctl install discard DIGEST), or install by hand.',
  },
  REGISTRY_UNREADABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'At start, mcp-servers.json was not valid JSON. It was moved aside intact (daemon.status registryLoadError says where) and the daemon started with no services.',
  },
  REGISTRY_INVALID: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'At start, mcp-servers.json failed its schema or named a service twice. It was moved aside intact (daemon.status registryLoadError says where and why) and the daemon started with no services.',
  },
  CLIENT_CONFIG_INVALID: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    wire: false,
    description: 'Client side: wispctl mcp connect-client found the MCP client\'s config file unusable: not valid JSON (comments included), not a JSON object, its server list not an object, not a regular file, or too large. The file was not changed. Fix it, or add the entry by hand (wispctl mcp serve --print-config CLIENT), then run again.',
  },
  OFFER_HELD: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.refused,
    description: 'The prompt (or resource template) is held: its definition changed, or it appeared, since the service\'s prompts and templates were pinned, and no human has accepted it yet. It is not listed or got. Review it (offers.review, wispctl mcp review) and accept it (offers.accept).',
  },
  NOT_OFFERED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'The service does not offer that: it did not declare resources (for resources.read) or prompts (for prompts.get) when it was activated. Nothing was sent to it.',
  },
  SERVER_REFUSED: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'The server answered a resources/read, prompts/get or one of their lists with a JSON-RPC error (data.server holds its code and redacted message). The service stays active.',
  },
  ELICITATION_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No elicitation (a server\'s request for input) with that id (answered ones are kept for a while, then forgotten).',
  },
  ELICITATION_NOT_PENDING: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'The elicitation was already answered (the first answer wins) or cancelled (its call ended, the service stopped); data.status says which.',
  },
  ELICITATION_INVALID: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.usage,
    description: 'An elicitation answer\'s content fails the schema the server asked with (data.errors lists each failure), or content came with decline/cancel or with a URL-mode request. Nothing was sent: answer again.',
  },
  PROFILE_NOT_FOUND: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.notFound,
    description: 'No profile of that name (wispctl mcp profile list shows them). A gateway started with --profile NAME refuses to start while the daemon answers without it.',
  },
  PROFILE_EXISTS: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.conflict,
    description: 'A profile of that name exists already: change it with profiles.set (wispctl mcp profile edit), or remove it first.',
  },
  PROFILES_UNREADABLE: {
    rpcCode: JSONRPC_APPLICATION_ERROR,
    exit: EXIT.failure,
    description: 'profiles.json in the data dir is not valid JSON or fails its schema (data.file and data.problem say which). It is left as it is, never overwritten: every profiles method, and every gateway started with --profile, fails with this until the file is fixed or removed (it is read again at the next request).',
  },
} as const satisfies Record<string, CatalogEntry>;
