import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { LIMITS, WispError, type ErrorCode as WispCode } from '../control/index.js';
import { linkedSignal } from '../util/index.js';
import { buildCatalog, type CatalogTool } from './tool-catalog.js';
import { childEnvironment, checkCwd, resolveCommand } from './launch.js';
import { UnauthorizedError, discoverOAuthProtectedResourceMetadata, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HttpTransport, type TransportFailure } from './http-transport.js';
import { StdioTransport, type ProcessTracker, type StopLadder } from './stdio-transport.js';
import type { StderrTail } from './stderr-tail.js';
import type { StoredService } from './service-store.js';

/** A server that keeps answering with a nextCursor is cut off here. */
export const MAX_TOOL_PAGES = 100;

/**
 * The SDK validates tool outputs with draft-07 ajv, built from one page of listTools at a
 * time; we validate ourselves, so its validator is switched off (getValidator -> undefined).
 */
const noSdkValidation: jsonSchemaValidator = { getValidator: () => undefined as never };

export interface ConnectionHooks {
  spawned(pid: number | null): void;
  initialized(): void;
  /** A complete, checked tool list; throws (LIMIT_EXCEEDED) to refuse it. */
  discovered(tools: CatalogTool[], server: { name: string; version: string }, toolListVersion: number): void;
  /** The connection failed on its own (exit, protocol error, failed refresh, lost authorization with the scope asked for). */
  failed(code: WispCode, message: string, scope?: string | null): void;
}

export interface ConnectionOptions {
  readonly version: string;
  readonly ladder: StopLadder;
  readonly stderr: StderrTail;
  readonly searchPath: string | undefined;
  /** stdio: the service's own variables. http: its header values. */
  readonly env: Readonly<Record<string, string>>;
  /** http with OAuth: the provider holding the saved tokens (refreshed on 401 by the SDK). */
  readonly authProvider?: OAuthClientProvider | undefined;
  /** stdio: told when the server's process group starts and when it is empty again. */
  readonly tracker?: ProcessTracker | undefined;
}

export class Failure extends Error {
  constructor(
    readonly code: WispCode,
    message: string,
    /** NEEDS_AUTH: where the server says to log in, when known. */
    readonly authorizationServer: string | null = null,
    /** NEEDS_AUTH: the scope the server asked for (WWW-Authenticate). */
    readonly scope: string | null = null,
  ) {
    super(message);
  }
}

/**
 * One connection generation of one service: spawn, initialize, paginated discovery,
 * list_changed, stop. A generation never comes back: a new activation makes a new one.
 * Every callback checks `closed`, so nothing late from this generation leaks into the next.
 */
export class Connection {
  private transport: StdioTransport | undefined;
  private http: HttpTransport | undefined;
  private client: Client | undefined;
  private closed = false;
  /** Set once discovery finished: before that, a failing activation reports its own error. */
  private activated = false;
  private toolListVersion = 0;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private server = { name: 'unknown', version: 'unknown' };

  constructor(
    readonly config: StoredService,
    readonly generation: number,
    private readonly hooks: ConnectionHooks,
    private readonly options: ConnectionOptions,
  ) {}

  get pid(): number | undefined {
    return this.transport?.pid;
  }

  /** Runs activation to the end. Rejects with a Failure; the caller then stops the process. */
  async activate(signal: AbortSignal): Promise<void> {
    const timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    try {
      if (this.config.transport === 'http') {
        this.hooks.spawned(null);
        await this.openHttp(deadline, signal);
      } else {
        await checkCwd(this.config.cwd);
        const command = await resolveCommand(this.config.command, this.options.searchPath);
        signal.throwIfAborted();
        if (this.isClosed()) return;
        const transport = new StdioTransport(
          { command, args: this.config.args, cwd: this.config.cwd ?? undefined, env: childEnvironment(this.options.env) },
          { maxFrameBytes: LIMITS.maxStdioFrameBytes, ladder: this.options.ladder, stderr: this.options.stderr, tracker: this.options.tracker },
        );
        this.transport = transport;
        await transport.start();
        if (this.isClosed()) {
          await transport.stop(true);
          return;
        }
        this.hooks.spawned(transport.pid ?? 0);
        const client = this.newClient();
        await client.connect(transport, { timeout: remaining(deadline), signal });
      }
      const client = this.client;
      if (this.isClosed() || client === undefined) return;
      this.server = { name: client.getServerVersion()?.name ?? 'unknown', version: client.getServerVersion()?.version ?? 'unknown' };
      this.hooks.initialized();

      const tools = await this.listAllTools(deadline, signal);
      if (this.isClosed()) return;
      this.toolListVersion += 1;
      this.hooks.discovered(buildCatalog(this.config, this.generation, this.toolListVersion, tools), this.server, this.toolListVersion);
      this.activated = true;
    } catch (error) {
      const failure = this.toFailure(error, signal);
      if (failure.code !== 'NEEDS_AUTH' || this.config.url == null) throw failure;
      const challenge = this.http?.challenge;
      throw new Failure(failure.code, failure.message, await authorizationServerOf(this.config.url, challenge?.resourceMetadataUrl), challenge?.scope ?? null);
    }
  }

  private newClient(): Client {
    const client = new Client({ name: 'wispd', version: this.options.version }, { capabilities: {}, jsonSchemaValidator: noSdkValidation });
    this.client = client;
    // A client replaced after an expired session closes too: only the current one counts.
    client.onclose = () => {
      if (this.client === client) this.onClosed();
    };
    client.onerror = () => undefined; // surfaced through the failing request or onclose
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.scheduleRefresh());
    return client;
  }

  /** A new HTTP transport and client, initialized (a first activation, or after the server forgot our session). */
  private async openHttp(deadline: number, signal: AbortSignal): Promise<void> {
    const http = new HttpTransport({
      url: this.config.url ?? '',
      headers: this.options.env,
      maxMessageBytes: LIMITS.maxStdioFrameBytes,
      onFailure: (failure) => this.failWith(failure),
      authProvider: this.options.authProvider,
    });
    this.http = http;
    const client = this.newClient();
    await client.connect(http.inner, { timeout: remaining(deadline), signal });
  }

  /**
   * Runs one request; when a remote server answers 404 (it no longer knows our session),
   * opens a new session and sends it once more. The server never saw the first attempt.
   */
  private async withSession<T>(deadline: number, signal: AbortSignal, request: (client: Client) => Promise<T>): Promise<T> {
    const client = this.client;
    if (client === undefined || this.closed) throw new Failure('SERVER_EXITED', 'the connection is closed');
    try {
      return await request(client);
    } catch (error) {
      if (!(error instanceof StreamableHTTPError) || error.code !== 404 || this.isClosed()) throw error;
      const old = this.http;
      this.client = undefined;
      await old?.stop(0);
      await this.openHttp(deadline, signal);
      const renewed = this.client as Client | undefined;
      if (renewed === undefined || this.isClosed()) throw new Failure('SERVER_EXITED', 'the connection is closed');
      return request(renewed);
    }
  }

  /** A transport limit tripped: the connection fails now (once), whatever request was running. */
  private failWith(failure: TransportFailure): void {
    if (this.isClosed()) return;
    this.closed = true;
    this.hooks.failed(failure.code, failure.message);
    void this.http?.stop(0);
  }

  /** Discovers every page again; on failure the hooks hear `failed`. */
  refresh(): Promise<void> {
    this.refreshAgain = true;
    this.refreshing ??= this.runRefreshes().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * Sends one tools/call. On timeout or abort the SDK sends notifications/cancelled; the
   * caller then closes this connection. Rejects with a Failure.
   */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number, signal: AbortSignal): Promise<CallToolResult> {
    try {
      return (await this.withSession(Date.now() + timeoutMs, signal, (client) =>
        scoped(signal, (requestSignal) => client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal: requestSignal })),
      )) as CallToolResult;
    } catch (error) {
      const failure = this.toFailure(error, signal, timeoutMs);
      // Authorization lost (a refresh failed, or the server wants more scope): the service waits for a login.
      if (failure.code === 'NEEDS_AUTH' && !this.isClosed()) {
        this.closed = true;
        this.hooks.failed('NEEDS_AUTH', failure.message, this.http?.challenge?.scope ?? null);
        void this.http?.stop(0);
      }
      throw failure;
    }
  }

  /** Stops the process (the ladder; `force` skips to SIGKILL). Idempotent. */
  async stop(force: boolean): Promise<void> {
    this.closed = true;
    await this.transport?.stop(force);
    await this.http?.stop(force ? 0 : this.options.ladder.stdinGraceMs);
  }

  /** A method, not a field read, so the compiler does not assume it is unchanged across awaits. */
  private isClosed(): boolean {
    return this.closed;
  }

  private scheduleRefresh(): void {
    if (this.isClosed()) return;
    void this.refresh();
  }

  private async runRefreshes(): Promise<void> {
    while (this.refreshAgain && !this.closed) {
      this.refreshAgain = false;
      const timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs;
      const controller = new AbortController();
      try {
        const tools = await this.listAllTools(Date.now() + timeoutMs, controller.signal);
        if (this.isClosed()) return;
        this.toolListVersion += 1;
        this.hooks.discovered(buildCatalog(this.config, this.generation, this.toolListVersion, tools), this.server, this.toolListVersion);
      } catch (error) {
        if (this.isClosed()) return;
        const failure = this.toFailure(error, controller.signal);
        this.closed = true;
        this.hooks.failed(failure.code, `tool refresh failed: ${failure.message}`);
        return;
      }
    }
  }

  private async listAllTools(deadline: number, signal: AbortSignal): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= MAX_TOOL_PAGES) {
        throw new Failure('PROTOCOL_ERROR', `tools/list was still paging after ${MAX_TOOL_PAGES} pages`);
      }
      // A signal of its own per request: the SDK leaves a listener on the one it is given.
      const params = cursor === undefined ? {} : { cursor };
      const result = await this.withSession(deadline, signal, (client) =>
        scoped(signal, (requestSignal) => client.listTools(params, { timeout: remaining(deadline), signal: requestSignal })),
      );
      tools.push(...result.tools);
      if (tools.length > LIMITS.maxToolsPerService) {
        throw new WispError('LIMIT_EXCEEDED', `${this.config.name} offers more than ${LIMITS.maxToolsPerService} tools (at most ${LIMITS.maxToolsPerService} per service)`, {
          limit: 'maxToolsPerService',
          max: LIMITS.maxToolsPerService,
        });
      }
      if (result.nextCursor === undefined) return tools;
      cursor = result.nextCursor;
    }
  }

  private onClosed(): void {
    if (this.isClosed()) return;
    // The SDK closes a remote client whose initialize failed: activation reports why (unreachable, 401...).
    if (this.http !== undefined && !this.activated) return;
    this.closed = true;
    const failure = this.transport?.failure ?? this.http?.failure;
    if (failure !== undefined) this.hooks.failed(failure.code, failure.message);
    else if (this.http !== undefined) this.hooks.failed('SERVER_EXITED', 'the connection to the remote server closed');
    else this.hooks.failed('SERVER_EXITED', `the server exited (${this.transport?.exitInfo || 'pipes closed'})`);
    // Sweep whatever the server left in its process group.
    void this.transport?.stop(true);
  }

  private toFailure(error: unknown, signal: AbortSignal, timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs): Failure {
    const transportFailure = this.transport?.failure ?? this.http?.failure;
    if (transportFailure !== undefined) return new Failure(transportFailure.code, transportFailure.message);
    if (error instanceof Failure) return error;
    if (this.http !== undefined) {
      const remote = httpFailure(error, this.config.url ?? '');
      if (remote !== undefined) return remote;
    }
    if (signal.aborted) return new Failure('CANCELLED', 'cancelled (the client that asked went away, or the service was stopped)');
    if (error instanceof WispError) return new Failure(error.code, error.message);
    if (error instanceof McpError) {
      if (error.code === (ErrorCode.RequestTimeout as number)) {
        return new Failure('TIMEOUT', `the server did not answer within ${timeoutMs} ms`);
      }
      if (error.code === (ErrorCode.ConnectionClosed as number)) {
        return new Failure('SERVER_EXITED', `the server exited (${this.transport?.exitInfo || 'pipes closed'})`);
      }
      return new Failure('PROTOCOL_ERROR', `the server answered with an error: ${error.message}`);
    }
    return new Failure('PROTOCOL_ERROR', error instanceof Error ? error.message : String(error));
  }
}

/** What a remote server's failures mean: unreachable, HTTP errors, an expired session. */
function httpFailure(error: unknown, url: string): Failure | undefined {
  if (error instanceof UnauthorizedError) return new Failure('NEEDS_AUTH', `${url} needs a login (wispctl mcp login)`);
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401 || error.code === 403) return new Failure('NEEDS_AUTH', `${url} refused the request (HTTP ${error.code}): it needs authorization`);
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

/**
 * One SDK request with a signal of its own (the SDK leaves an abort listener on the signal
 * it is given), unhooked from `signal` once the request ends: see util/linked-signal.ts.
 */
async function scoped<T>(signal: AbortSignal, request: (requestSignal: AbortSignal) => Promise<T>): Promise<T> {
  const linked = linkedSignal(signal);
  try {
    return await request(linked.signal);
  } finally {
    linked.dispose();
  }
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}
