/**
 * Every documented limit, in one place (docs/limits.md is generated from this table).
 * Persisted data and the protocol depend on these: raise with care, never lower silently.
 */
export const LIMITS = {
  /** Services in the registry. */
  maxServices: 16,
  /** Tools one service may offer. */
  maxToolsPerService: 64,
  /** Active tools across every service. */
  maxActiveTools: 96,
  /** Resources, resource templates and prompts one service's list gives (more are left out, and the list says so). */
  maxResourcesPerService: 128,
  maxResourceTemplatesPerService: 64,
  maxPromptsPerService: 64,
  /** Pages of one such list read from a server (a server that keeps paging is cut off). */
  maxOfferPages: 32,
  /** One server log message (notifications/message): its data as JSON, cut to this many characters after redaction. */
  maxLogDataChars: 8192,
  /** Log messages one service may send a second; more are dropped (and counted in the next service.log event). */
  maxLogMessagesPerSecond: 50,
  /** Resource subscriptions (resources.subscribe) one client may hold, and one service may have across clients. */
  maxSubscriptionsPerClient: 64,
  maxSubscriptionsPerService: 256,
  /** One tool's input schema, serialized. */
  maxInputSchemaBytes: 16 * 1024,
  /** Fields of one elicitation form (its schema is also capped like an input schema). */
  maxElicitationFields: 64,
  /**
   * What checking one value against a tool's input schema may cost: subschema evaluations
   * with every $ref inlined, along arguments nested up to maxArgumentDepth. A schema over it
   * is SCHEMA_INVALID (a $ref fan-out would otherwise freeze the daemon).
   */
  maxSchemaCost: 20_000,
  /**
   * One tool's definition as pinned (name, title, description, input and output schema,
   * annotations), serialized: a longer one is refused at discovery. Bounds the pin file
   * (maxToolsPerService of these) and one tool's review.
   */
  maxToolDefinitionBytes: 64 * 1024,
  /** One call's arguments, serialized. */
  maxCallArgumentBytes: 32 * 1024,
  /** One frame (line) on the control socket. */
  maxControlFrameBytes: 1024 * 1024,
  /** One stdio protocol frame from an MCP server. */
  maxStdioFrameBytes: 1024 * 1024,
  /**
   * Nesting of one message from an MCP server (a stdio line, an HTTP response, an SSE event),
   * measured on its text before it is parsed: a deeper one fails that server's connection
   * (PROTOCOL_ERROR). Well below what JSON.stringify and the SDK's recursion survive (a
   * frame some 5,000 levels deep overflowed the stack in the SDK's error path).
   */
  maxServerMessageNesting: 512,
  /**
   * Tool-list refreshes one server's notifications/tools/list_changed may cause in any
   * toolRefreshWindowMs: one past it waits, with every later one, for a single refresh when
   * the window allows (calls wait for it too). A manual refresh is never held back.
   */
  maxToolRefreshesPerWindow: 10,
  /** The window of maxToolRefreshesPerWindow, in milliseconds. */
  toolRefreshWindowMs: 2000,
  /**
   * A server whose list_changed keep being held back this long in a row (a loop between
   * services, say) fails with LIMIT_EXCEEDED and is stopped, in milliseconds.
   */
  maxToolRefreshThrottleMs: 6000,
  /** Result text given to the model, in characters. */
  maxResultChars: 32_000,
  /**
   * Images, audio and binary resources passed whole to a gateway client, for a service whose
   * media setting is on: decoded bytes in one result, all of them together (the rest become
   * markers). Under the control socket's frame cap once base64-encoded.
   */
  maxMediaBytes: 512 * 1024,
  /** Discovery and tool-call timeout, in milliseconds. */
  defaultTimeoutMs: 10_000,
  /** The longest any tool call may run, however often its server reports progress (each report restarts the per-call timeout). */
  maxCallMs: 600_000,
  /** One npm install, end to end, in milliseconds. */
  installTimeoutMs: 180_000,
  /** Unread bytes queued for one socket client before it is dropped as a slow consumer. */
  maxClientBacklogBytes: 8 * 1024 * 1024,
  /** Events the daemon keeps for clients that reconnect with `since`. */
  eventHistory: 2048,
  /** Those events' total size, serialized (under maxClientBacklogBytes, so a full replay never trips the slow-consumer drop). */
  maxEventHistoryBytes: 4 * 1024 * 1024,
  /** Requests in one JSON-RPC batch. */
  maxBatchRequests: 64,
  /** Calls of one socket client still unanswered (tools.call, installs.start: they wait on a human). */
  maxPendingCallsPerClient: 64,
  /**
   * Such calls still unanswered across every socket client. A gateway (`wispctl mcp serve`,
   * every connection of one process; with --http, every session of its one token) is one
   * client for maxPendingCallsPerClient.
   */
  maxPendingCalls: 1024,
  /**
   * Such calls of every gateway together: the other 512 of maxPendingCalls are kept for the
   * user's own clients (wispctl, the panel, scripts), so MCP clients behind gateways can never
   * take them all.
   */
  maxGatewayPendingCalls: 512,
  /** Control-socket connections open at once; one more is refused (LIMIT_EXCEEDED, id null) and closed. */
  maxConnections: 128,
  /** Connections of every gateway together (each names its gateway in client.identify). */
  maxGatewayConnections: 96,
  /** Connections of one gateway (one `wispctl mcp serve` process). */
  maxConnectionsPerGateway: 40,
  /**
   * Bytes of unfinished frames (a line without its newline yet) held across every control
   * connection: a connection whose frame would pass it is failed (LIMIT_EXCEEDED) and closed.
   * Each frame is also capped alone (maxControlFrameBytes).
   */
  maxHeldFrameBytes: 8 * 1024 * 1024,
  /** Open approvals (pending, or approved and not yet used) asked for by one client. */
  maxOpenApprovalsPerClient: 64,
  /** Open approvals in total. */
  maxOpenApprovals: 1024,
  /**
   * How long a sandboxed `ask` service's connection waits for its network.connect approval,
   * in milliseconds: unanswered by then, it is refused (network.refused) and the approval
   * cancelled. The server's own client may give up sooner.
   */
  networkAskMs: 120_000,
  /** Nesting of a call's arguments (and of any request param), in levels: `{}` is 1, `{"a":[]}` is 2. */
  maxArgumentDepth: 64,
  /**
   * Nesting of one control frame, measured on its text before it is parsed: deeper frames
   * are refused unparsed (INVALID_REQUEST). Far above maxArgumentDepth, so a too-deep
   * request is normally parsed and answered with its id and the precise code.
   */
  maxFrameNesting: 16_384,
  /** Items in one page of approvals.list. */
  maxApprovalsPage: 256,
  /** One page of a paged list, serialized (a page holds at least one item). */
  maxPageBytes: 512 * 1024,
  /** Model rounds (requests) in one task before it is stopped. */
  maxModelRounds: 16,
  /** One user message, in characters. */
  maxUserMessageChars: 100_000,
  /** Service name length. */
  maxServiceNameChars: 64,
  /** Command, argument and cwd length, in characters. */
  maxCommandChars: 4096,
  /** Arguments per service. */
  maxArgs: 256,
  /** Environment variables per service. */
  maxEnvVars: 64,
  /** One environment variable's value, in bytes. */
  maxEnvValueBytes: 32 * 1024,
  /** A sandbox profile's file grants (read and write, each) and its network hosts. */
  maxSandboxGrants: 64,
  /**
   * Tasks (processes and threads) a sandboxed server may have at once: its RLIMIT_NPROC,
   * set inside its own user namespace, where the kernel counts only the sandbox's tasks.
   */
  maxSandboxTasks: 512,
  /** Profiles (named sets of services a gateway serves: wispctl mcp profile). */
  maxProfiles: 32,
  /** A profile's name length (letters, digits, _ and -). */
  maxProfileNameChars: 32,
  /** A profile's description, in characters. */
  maxProfileDescriptionChars: 200,
} as const;
