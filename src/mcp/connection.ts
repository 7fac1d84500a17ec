import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, isJSONRPCErrorResponse, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { LIMITS, WispError, type ErrorCode as WispCode } from '../core/index.js';
import { linkedSignal } from '../util/index.js';
import { buildCatalog, type CatalogTool } from './tool-catalog.js';
import { childEnvironment, checkCwd, resolveCommand } from './launch.js';
import { UnauthorizedError, discoverOAuthProtectedResourceMetadata, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HttpTransport, type TransportFailure } from './http-transport.js';
import { StdioTransport, type ProcessTracker, type StopLadder } from './stdio-transport.js';
import type { Redact, StderrTail } from './stderr-tail.js';
import type { StoredService } from './service-store.js';

/** A server that keeps answering with a nextCursor is cut off here. */
export const MAX_TOOL_PAGES = 100;

/** A server that keeps announcing tool-list changes while its list is being read is cut off here. */
export const MAX_REFRESH_ROUNDS = 16;

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
  /** Known secret values out of what a server says (error messages, stdout excerpts). */
  readonly redact: Redact;
  /** stdio: told when the server's process group starts and when it is empty again. */
  readonly tracker?: ProcessTracker | undefined;
}

/** A server's own error message is kept to this many characters (after redaction). */
export const MAX_REMOTE_MESSAGE_CHARS = 1000;

export class Failure extends Error {
  constructor(
    readonly code: WispCode,
    message: string,
    /** NEEDS_AUTH: where the server says to log in, when known. */
    readonly authorizationServer: string | null = null,
    /** NEEDS_AUTH: the scope the server asked for (WWW-Authenticate). */
    readonly scope: string | null = null,
    /** The server answered with a JSON-RPC error: its code and (redacted) message. */
    readonly remote: { readonly code: number; readonly message: string } | null = null,
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
  /**
   * Set from the moment the tool list is declared changed (list_changed, or a refresh asked
   * for) until the new list is in: no call is sent meanwhile, and `settled` waits for it.
   */
  private changing: { promise: Promise<void>; resolve: () => void; reject: (failure: Failure) => void } | undefined;
  /** What ended a change without a new list (a failed refresh, a stop): later waits hear it too. */
  private changeFailure: Failure | undefined;
  /** Aborted when the service is stopped: every call still running is cancelled (the SDK tells the server). */
  private readonly calls = new AbortController();
  private server = { name: 'unknown', version: 'unknown' };
  /**
   * JSON-RPC errors the server sent, seen on the wire before the SDK turns them into an
   * McpError: an McpError is the server's answer only if it is here. The SDK's own errors
   * (its request timeout, the connection closing) use the same codes but never pass here.
   */
  private readonly remoteErrors: string[] = [];
  /** The transport under the current client closed (what the SDK then rejects with is local). */
  private transportLost = false;
  private observed: Transport | undefined;

  constructor(
    readonly config: StoredService,
    readonly generation: number,
    private readonly hooks: ConnectionHooks,
    private readonly options: ConnectionOptions,
  ) {
    // Every running call listens to it (and unhooks when it ends): many at once is normal.
    setMaxListeners(0, this.calls.signal);
  }

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
          { maxFrameBytes: LIMITS.maxStdioFrameBytes, ladder: this.options.ladder, stderr: this.options.stderr, redact: this.options.redact, tracker: this.options.tracker },
        );
        this.transport = transport;
        await transport.start();
        if (this.isClosed()) {
          await transport.stop(true);
          return;
        }
        this.hooks.spawned(transport.pid ?? 0);
        const client = this.newClient();
        this.observe(transport);
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

  /**
   * Notes every JSON-RPC error response as it arrives (the SDK chains a handler set before
   * it connects, and calls it first), and when the transport closes.
   */
  private observe(transport: Transport): void {
    this.transportLost = false;
    this.observed = transport;
    transport.onmessage = (message) => {
      if (!isJSONRPCErrorResponse(message)) return;
      this.remoteErrors.push(remoteKey(message.error.code, message.error.message));
      if (this.remoteErrors.length > 64) this.remoteErrors.shift();
    };
    transport.onclose = () => {
      if (this.observed === transport) this.transportLost = true;
    };
  }

  /** Whether an McpError is a server's JSON-RPC error (seen on the wire), consuming the note. */
  private fromServer(error: McpError): boolean {
    const prefix = `MCP error ${error.code}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    const at = this.remoteErrors.indexOf(remoteKey(error.code, message));
    if (at === -1) return false;
    this.remoteErrors.splice(at, 1);
    return true;
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
    this.observe(http.inner);
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
    this.endChanging(new Failure(failure.code, failure.message));
    this.hooks.failed(failure.code, failure.message);
    void this.http?.stop(0);
  }

  /**
   * Discovers every page again; on failure the hooks hear `failed`. The tool list counts as
   * changing from this call (made in the same tick as a list_changed is handled) until the
   * new list is in.
   */
  refresh(): Promise<void> {
    this.refreshAgain = true;
    this.markChanging();
    this.refreshing ??= this.runRefreshes().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Whether the tool list is changing: declared changed, the new one not yet in. */
  get isChanging(): boolean {
    return this.changing !== undefined;
  }

  /**
   * Resolves once the tool list is not changing (at once when it is not). Rejects with what
   * ended the change when no new list came (the refresh's own error, a stop), or CANCELLED
   * when `signal` aborts first.
   */
  async settled(signal: AbortSignal): Promise<void> {
    if (this.changeFailure !== undefined) throw this.changeFailure;
    const changing = this.changing;
    if (changing === undefined) return;
    signal.throwIfAborted();
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        changing.promise,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(new Failure('CANCELLED', 'cancelled while waiting for the new tool list (the client that asked went away)'));
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Sends one tools/call, bound to the tool-list version its approval was given at. On
   * timeout or abort the SDK sends notifications/cancelled; the caller then closes this
   * connection. A stop (`cancelCalls`) cancels it the same way. Rejects with a Failure.
   */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number, signal: AbortSignal, toolListVersion: number): Promise<CallToolResult> {
    const linked = linkedSignal(signal, this.calls.signal);
    try {
      return (await this.withSession(Date.now() + timeoutMs, linked.signal, (client) => {
        // Checked in the tick that writes the request (the SDK sends synchronously), so no
        // call leaves at a tool-list version the server has declared changed.
        if (this.changing !== undefined || this.toolListVersion !== toolListVersion) {
          throw new Failure('APPROVAL_STALE', `the tool list of ${this.config.name} changed before ${name} was sent (its approval was for version ${toolListVersion}); nothing was sent`);
        }
        return scoped(linked.signal, (requestSignal) => client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal: requestSignal }));
      })) as CallToolResult;
    } catch (error) {
      const stopped = this.calls.signal.aborted && !(error instanceof Failure && error.code === 'APPROVAL_STALE');
      const failure = stopped ? new Failure('CANCELLED', `the call was cancelled: ${String(this.calls.signal.reason)}`) : this.toFailure(error, signal, timeoutMs, 'TOOL_ERROR');
      // Authorization lost (a refresh failed, or the server wants more scope): the service waits for a login.
      if (failure.code === 'NEEDS_AUTH' && !this.isClosed()) {
        this.closed = true;
        this.endChanging(failure);
        this.hooks.failed('NEEDS_AUTH', failure.message, this.http?.challenge?.scope ?? null);
        void this.http?.stop(0);
      }
      throw failure;
    } finally {
      linked.dispose();
    }
  }

  /**
   * The service is being stopped (disabled, edited, deleted): every call still running is
   * cancelled now, so the SDK sends notifications/cancelled before stdin is closed and the
   * callers hear CANCELLED with `reason`; calls waiting for a new tool list fail the same way.
   */
  cancelCalls(reason: string): void {
    this.calls.abort(reason);
    this.endChanging(new Failure('CANCELLED', `cancelled: ${reason}`));
  }

  /** Stops the process (the ladder; `force` skips to SIGKILL). Idempotent. */
  async stop(force: boolean): Promise<void> {
    this.closed = true;
    this.endChanging(new Failure('SERVICE_NOT_ACTIVE', `${this.config.name} was stopped`));
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

  /** From now until the new list is in (or the connection ends), the tool list is changing. */
  private markChanging(): void {
    if (this.changing !== undefined || this.isClosed()) return;
    let resolve!: () => void;
    let reject!: (failure: Failure) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => undefined); // heard through settled(), if anyone waits
    this.changing = { promise, resolve, reject };
  }

  /** The change is over: the new list is in (no failure), or it never will be (then every wait hears why). */
  private endChanging(failure?: Failure): void {
    const changing = this.changing;
    if (changing === undefined) return;
    this.changing = undefined;
    if (failure === undefined) changing.resolve();
    else {
      this.changeFailure = failure;
      changing.reject(failure);
    }
  }

  private async runRefreshes(): Promise<void> {
    for (let round = 1; this.refreshAgain && !this.closed; round++) {
      this.refreshAgain = false;
      const timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs;
      const controller = new AbortController();
      try {
        if (round > MAX_REFRESH_ROUNDS) {
          throw new Failure('PROTOCOL_ERROR', `the server announced ${MAX_REFRESH_ROUNDS} tool-list changes in a row while its list was being read`);
        }
        const tools = await this.listAllTools(Date.now() + timeoutMs, controller.signal);
        if (this.isClosed()) return;
        this.toolListVersion += 1;
        this.hooks.discovered(buildCatalog(this.config, this.generation, this.toolListVersion, tools), this.server, this.toolListVersion);
      } catch (error) {
        if (this.isClosed()) return;
        const failure = this.toFailure(error, controller.signal);
        this.closed = true;
        // The calls waiting for this list fail with the discovery's own error.
        this.endChanging(new Failure(failure.code, `tool refresh failed: ${failure.message}`));
        this.hooks.failed(failure.code, `tool refresh failed: ${failure.message}`);
        return;
      }
    }
    if (!this.isClosed()) this.endChanging();
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
    this.endChanging(new Failure(failure?.code ?? 'SERVER_EXITED', failure?.message ?? 'the server closed the connection while its new tool list was awaited'));
    if (failure !== undefined) this.hooks.failed(failure.code, failure.message);
    else if (this.http !== undefined) this.hooks.failed('SERVER_EXITED', 'the connection to the remote server closed');
    else this.hooks.failed('SERVER_EXITED', `the server exited (${this.transport?.exitInfo || 'pipes closed'})`);
    // Sweep whatever the server left in its process group.
    void this.transport?.stop(true);
  }

  /**
   * What went wrong, by where it came from: the transport's own failures, ours (cancel),
   * the server's JSON-RPC error (its answer, whatever its code: `remoteAs`, the service
   * stays up), or the SDK's local errors (its request timeout, the connection closing).
   */
  private toFailure(error: unknown, signal: AbortSignal, timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs, remoteAs: WispCode = 'PROTOCOL_ERROR'): Failure {
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
      if (this.fromServer(error)) {
        const prefix = `MCP error ${error.code}: `;
        const text = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
        const message = this.options.redact(text).slice(0, MAX_REMOTE_MESSAGE_CHARS);
        return new Failure(remoteAs, `the server answered with an error (JSON-RPC ${error.code}): ${message}`, null, null, { code: error.code, message });
      }
      if (this.transportLost || error.code === (ErrorCode.ConnectionClosed as number)) {
        return new Failure('SERVER_EXITED', `the server exited (${this.transport?.exitInfo || 'pipes closed'})`);
      }
      if (error.code === (ErrorCode.RequestTimeout as number)) {
        return new Failure('TIMEOUT', `the server did not answer within ${timeoutMs} ms`);
      }
      return new Failure('PROTOCOL_ERROR', `the server's answer was refused: ${this.options.redact(error.message).slice(0, MAX_REMOTE_MESSAGE_CHARS)}`);
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

function remoteKey(code: number, message: string): string {
  return `${code}\u0000${message}`;
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}
