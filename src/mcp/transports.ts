import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UnauthorizedError, discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { LIMITS } from '../core/index.js';
import { AuthRequired, Failure, type TransportFailure } from './failure.js';
import { HttpTransport, type BearerSource } from './http-transport.js';
import { SseTransport } from './sse-transport.js';
import { childEnvironment, checkCwd, resolveCommand } from './launch.js';
import type { Redact, StderrTail } from './stderr-tail.js';
import { StdioTransport, type ProcessTracker, type StopLadder } from './stdio-transport.js';
import type { StoredService } from './service-store.js';

export { transportLink } from './link.js';

/** What to connect to: one service, as launched (`${VAR}` templates filled in), with its secrets. */
export interface ServiceLaunch {
  readonly config: StoredService;
  /** stdio: the service's own variables. http: its header values. */
  readonly env: Readonly<Record<string, string>>;
  /** http with OAuth: the saved login (its access token on every request, renewed on a 401). */
  readonly bearer?: BearerSource | undefined;
}

/** What the connection hands a factory besides the launch: its limits, its sinks and its hooks. */
export interface TransportContext {
  /** The activation's: aborted when the service is stopped meanwhile. */
  readonly signal: AbortSignal;
  readonly ladder: StopLadder;
  /** The daemon's PATH, for bare command names. */
  readonly searchPath: string | undefined;
  /** Where a local server's stderr goes (bounded, in memory). */
  readonly stderr: StderrTail;
  /** Known secret values out of what a server says. */
  readonly redact: Redact;
  /** Told when a local server's process group starts and when it is empty again. */
  readonly tracker?: ProcessTracker | undefined;
  /** A limit tripped outside any request (a remote response too large): the connection fails now, once. */
  readonly onFailure: (failure: TransportFailure) => void;
}

/** One opened transport with what a connection needs to know about it beyond the MCP `Transport`. */
export interface ServiceLink {
  /** local: the server is a process of ours (its close means it exited); remote: a server elsewhere. */
  readonly kind: 'local' | 'remote';
  readonly transport: Transport;
  /** A local server's process id (0 when unknown); null for a remote one. */
  readonly pid: number | null;
  /** Why the transport closed or refused to go on by itself, if it did. */
  readonly failure: TransportFailure | undefined;
  /** How a local server's process ended ('' while it runs, or when there is no process). */
  readonly exitInfo: string;
  /** The scope the server asked for in its last authorization challenge, if any. */
  readonly challengedScope: string | null;
  /** An error of this kind of transport in the catalog's terms (HTTP status, unreachable, login needed), or undefined. */
  explain(error: unknown): Failure | undefined;
  /** Whether the server forgot our session: a new link then carries the request once more. */
  sessionLost(error: unknown): boolean;
  /** Where the server says to log in, asked within a few seconds; null when unknown. */
  authorizationServer(): Promise<string | null>;
  /** Down the stop ladder (`force`: at once); resolves once the server is gone. Idempotent. */
  stop(force: boolean): Promise<void>;
}

/**
 * The seam between a connection and how it reaches its server: given a service's launch,
 * an opened (started) link. The default spawns local servers and dials remote ones; tests
 * hand in-process servers over the SDK's in-memory transport.
 */
export type TransportFactory = (launch: ServiceLaunch, context: TransportContext) => Promise<ServiceLink>;

/** stdio services as child processes in their own process group, http services over streamable HTTP, sse ones over legacy HTTP+SSE. */
export const openTransport: TransportFactory = (launch, context) => {
  if (launch.config.transport === 'http') return Promise.resolve(openRemote(launch, context));
  if (launch.config.transport === 'sse') return Promise.resolve(openSse(launch, context));
  return openLocal(launch, context);
};

async function openLocal(launch: ServiceLaunch, context: TransportContext): Promise<ServiceLink> {
  const { config } = launch;
  await checkCwd(config.cwd);
  const command = await resolveCommand(config.command, context.searchPath);
  context.signal.throwIfAborted();
  const transport = new StdioTransport(
    { command, args: config.args, cwd: config.cwd ?? undefined, env: childEnvironment(launch.env) },
    { maxFrameBytes: LIMITS.maxStdioFrameBytes, ladder: context.ladder, stderr: context.stderr, redact: context.redact, tracker: context.tracker },
  );
  await transport.start();
  return {
    kind: 'local',
    transport,
    pid: transport.pid ?? 0,
    get failure() {
      return transport.failure;
    },
    get exitInfo() {
      return transport.exitInfo;
    },
    challengedScope: null,
    explain: () => undefined,
    sessionLost: () => false,
    authorizationServer: () => Promise.resolve(null),
    stop: (force) => transport.stop(force),
  };
}

function openRemote(launch: ServiceLaunch, context: TransportContext): ServiceLink {
  const url = launch.config.url ?? '';
  const http = new HttpTransport({
    url,
    headers: launch.env,
    maxMessageBytes: LIMITS.maxStdioFrameBytes,
    onFailure: context.onFailure,
    bearer: launch.bearer,
  });
  return {
    kind: 'remote',
    transport: http.inner,
    pid: null,
    get failure() {
      return http.failure;
    },
    exitInfo: '',
    get challengedScope() {
      return http.challenge?.scope ?? null;
    },
    explain: (error) => httpFailure(error, url, launch),
    sessionLost: (error) => error instanceof StreamableHTTPError && error.code === 404,
    authorizationServer: () => authorizationServerOf(url, http.challenge?.resourceMetadataUrl),
    stop: (force) => http.stop(force ? 0 : context.ladder.stdinGraceMs),
  };
}

/** A legacy HTTP+SSE server: the same caps, headers and failures as streamable HTTP; no session to renew. */
function openSse(launch: ServiceLaunch, context: TransportContext): ServiceLink {
  const url = launch.config.url ?? '';
  const sse = new SseTransport({ url, headers: launch.env, maxMessageBytes: LIMITS.maxStdioFrameBytes, onFailure: context.onFailure, bearer: launch.bearer });
  return {
    kind: 'remote',
    transport: sse.inner,
    pid: null,
    get failure() {
      return sse.failure;
    },
    exitInfo: '',
    get challengedScope() {
      return sse.challenge?.scope ?? null;
    },
    explain: (error) => sseFailure(error, url, launch) ?? httpFailure(error, url, launch),
    // A legacy session ends with its stream (see SseTransport): it is never renewed under a running call.
    sessionLost: () => false,
    authorizationServer: () => authorizationServerOf(url, sse.challenge?.resourceMetadataUrl),
    stop: () => sse.stop(),
  };
}

/** The SSE stream's own failures: the GET answered with an HTTP status, or a POST was refused. */
function sseFailure(error: unknown, url: string, launch: ServiceLaunch): Failure | undefined {
  const login = loginHint(launch);
  if (error instanceof SseError && typeof error.code === 'number') {
    if (error.code === 401 || error.code === 403) return new AuthRequired(`${url} refused the event stream (HTTP ${error.code})${login}`);
    return new Failure('SERVER_HTTP_ERROR', `${url} answered the event stream with HTTP ${error.code}`);
  }
  // No status: the stream could not be opened at all (refused, DNS, TLS).
  if (error instanceof SseError) return new Failure('SERVER_UNREACHABLE', `cannot reach ${url}: ${error.message.slice(0, 300)}`);
  const posted = error instanceof Error ? /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(error.message) : null;
  if (posted !== null) {
    const status = Number(posted[1]);
    if (status === 401 || status === 403) return new AuthRequired(`${url} refused a message (HTTP ${status})${login}`);
    return new Failure('SERVER_HTTP_ERROR', `${url} refused a message with HTTP ${status}`);
  }
  return undefined;
}

/** What a refusal for want of authorization adds: why the last renewal failed, and the login (when the service uses OAuth). */
function loginHint(launch: ServiceLaunch): string {
  const why = launch.bearer?.problem;
  return `${why !== undefined ? ` (${why})` : ''}: it needs authorization${launch.config.oauth?.enabled === true ? `: log in with wispctl mcp login ${launch.config.name}` : ''}`;
}

/** What a remote server's failures mean: unreachable, HTTP errors, a login needed. */
function httpFailure(error: unknown, url: string, launch: ServiceLaunch): Failure | undefined {
  const login = launch.config.oauth?.enabled === true ? `: log in with wispctl mcp login ${launch.config.name}` : '';
  if (error instanceof UnauthorizedError) return new AuthRequired(`${url} needs a login${login}`);
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401 || error.code === 403) {
      const why = launch.bearer?.problem;
      return new AuthRequired(`${url} refused the request (HTTP ${error.code})${why !== undefined ? ` (${why})` : ''}: it needs authorization${login}`);
    }
    return new Failure('SERVER_HTTP_ERROR', `${url} answered HTTP ${String(error.code)}: ${error.message.slice(0, 300)}`);
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return new Failure('SERVER_UNREACHABLE', `cannot reach ${url}: ${cause?.code ?? cause?.message ?? error.message}`);
  }
  return undefined;
}

/** Where a protected server says to log in (RFC 9728 metadata), within a few seconds, or null. */
async function authorizationServerOf(url: string, resourceMetadataUrl: URL | undefined): Promise<string | null> {
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(url, resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : undefined, (input, init) =>
      fetch(input, { ...init, signal: AbortSignal.timeout(3000) }),
    );
    return metadata.authorization_servers?.[0] ?? null;
  } catch {
    return null;
  }
}
