import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { LIMITS, WispError, type ErrorCode as WispCode, isRemoteTransport } from '../core/index.js';
import { linkedSignal, withOwnSignal, type CallSignal } from '../util/index.js';
import { CallClock } from './call-clock.js';
import { CallChannel, ChannelClosed, RemoteCallError } from './call-channel.js';
import { ListChange } from './list-change.js';
import { RefreshThrottle } from './refresh-throttle.js';
import { WireErrors } from './wire-errors.js';
import { AuthRequired, Failure, failureOf, guardMessages, unhandledMessage, type TransportFailure } from './failure.js';
import { buildCatalog } from './tool-catalog.js';
import { sendOffer, type OfferKind, type Offers } from './offerings.js';
import { answerElicitations, clientCapabilities } from './elicit-handler.js';
import { relayNotices } from './notice-handlers.js';
import { ModernPeer, holdingClose, modernFailure, refusedForModern, type ModernChannel } from './modern.js';
import type { StoredService } from './service-store.js';
import { MAX_REFRESH_ROUNDS, MAX_REMOTE_MESSAGE_CHARS, MAX_TOOL_PAGES, type ConnectionHooks, type ConnectionOptions } from './connection-types.js';
import { openTransport, type ServiceLaunch, type ServiceLink, type TransportContext } from './transports.js';

export type { ConnectionHooks, ConnectionOptions } from './connection-types.js';
export { MAX_TOOL_PAGES, MAX_REFRESH_ROUNDS, MAX_REMOTE_MESSAGE_CHARS } from './connection-types.js';

/**
 * The SDK validates tool outputs with draft-07 ajv, built from one page of listTools at a
 * time; we validate ourselves, so its validator is switched off (getValidator -> undefined).
 */
const noSdkValidation: jsonSchemaValidator = { getValidator: () => undefined as never };

/**
 * One connection generation of one service: spawn, initialize, paginated discovery,
 * list_changed, stop. A generation never comes back: a new activation makes a new one.
 * Every callback checks `closed`, so nothing late from this generation leaks into the next.
 */
export class Connection {
  private link: ServiceLink | undefined;
  /** The latest link asked of the factory (the one `link` becomes): a stop reaches it even while it opens. */
  private opening: Promise<ServiceLink> | undefined;
  /** The 2025 era's SDK Client, or a 2026 connection (modern.ts). */
  private client: Client | ModernPeer | undefined;
  /** Each connected client's channel for tool calls (call-channel.ts; modern.ts on 2026). */
  private readonly channels = new WeakMap<Client | ModernPeer, CallChannel | ModernChannel>();
  private closed = false;
  /** Set once discovery finished: before that, a failing activation reports its own error. */
  private activated = false;
  private toolListVersion = 0;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** From the tool list declared changed (list_changed, a refresh) until the new list is in: no call is sent, `settled` waits. */
  private readonly change = new ListChange();
  /** Aborted when the service is stopped: every call still running is cancelled (the server is told). */
  private readonly calls = new AbortController();
  /** The aborts of running calls that brought their own signal (callTool): a stop calls each. */
  private readonly callAborts = new Set<(reason: unknown) => void>();
  /** The 2025 revision agreed at initialize (a 2026 connection's is its peer's). */
  private spoken: string | undefined;
  private server = { name: 'unknown', version: 'unknown', protocolVersion: 'unknown' };
  /** The server's JSON-RPC errors seen on the wire, and the transport closing (wire-errors.ts). */
  private readonly wire = new WireErrors();
  /** Bounds the refreshes the server's list_changed cause (refresh-throttle.ts); runs one it held back. */
  private readonly throttle: RefreshThrottle;
  /** What ended this connection by itself (a lost login, a limit): what calls running then hear. */
  private ended: Failure | undefined;

  constructor(
    readonly config: StoredService,
    readonly generation: number,
    private readonly hooks: ConnectionHooks,
    private readonly options: ConnectionOptions,
  ) {
    // Every running call listens to it (and unhooks when it ends): many at once is normal.
    setMaxListeners(0, this.calls.signal);
    this.toolListVersion = options.toolListVersionBase ?? 0;
    this.throttle = new RefreshThrottle(() => {
      if (!this.isClosed()) void this.refresh();
    }, options.refreshLimits);
  }

  get pid(): number | undefined {
    return this.link?.pid ?? undefined;
  }

  /** Runs activation to the end. Rejects with a Failure; the caller then stops the process. */
  async activate(signal: AbortSignal): Promise<void> {
    const timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    try {
      if (!(await this.connect(deadline, signal))) return;
      const client = this.client;
      if (this.isClosed() || client === undefined) return;
      const info = client instanceof ModernPeer ? client.client.getServerVersion() : client.getServerVersion();
      const protocolVersion = client instanceof ModernPeer ? client.protocolVersion : this.spoken;
      this.server = { name: info?.name ?? 'unknown', version: info?.version ?? 'unknown', protocolVersion: protocolVersion ?? 'unknown' };
      this.hooks.initialized();

      const tools = await this.listAllTools(deadline, signal);
      if (this.isClosed()) return;
      this.toolListVersion += 1;
      this.hooks.discovered(buildCatalog(this.config, this.generation, this.toolListVersion, tools), this.server, this.toolListVersion);
      this.activated = true;
    } catch (error) {
      throw await this.activationFailure(error, signal);
    }
  }

  /** Opens the first link and initializes over it; false when the connection was closed meanwhile. */
  private async connect(deadline: number, signal: AbortSignal): Promise<boolean> {
    // A remote server has no process to start: it counts as spawned before it is dialled.
    const remote = isRemoteTransport(this.config.transport);
    if (remote) this.hooks.spawned(null);
    const link = await this.open(signal);
    if (this.isClosed()) {
      await link.stop(true);
      return false;
    }
    if (!remote) this.hooks.spawned(link.pid);
    await this.initialize(link, deadline, signal);
    return true;
  }

  /** A new link from the factory (a first activation, or after the server forgot our session). */
  private async open(signal: AbortSignal): Promise<ServiceLink> {
    const launch: ServiceLaunch = { config: this.config, env: this.options.env, bearer: this.options.bearer };
    const { ladder, searchPath, stderr, redact, tracker } = this.options;
    const context: TransportContext = { signal, ladder, searchPath, stderr, redact, tracker, onFailure: (failure) => this.failWith(failure) };
    const opening = (this.options.transports ?? openTransport)(launch, context);
    this.opening = opening;
    const link = await opening;
    this.link = link;
    return link;
  }

  /** A new client over `link`, initialized; a server that refuses the 2025 handshake for the 2026 revision is spoken to in 2026 on the same link (modern.ts). */
  private async initialize(link: ServiceLink, deadline: number, signal: AbortSignal): Promise<void> {
    const client = this.newClient();
    this.wire.observe(link.transport);
    let transport = link.transport;
    try {
      // A signal of its own: the SDK leaves a listener on the one its initialize request is given.
      this.spoken = await holdingClose(link.transport, () => withOwnSignal(signal, (own) => client.connect(link.transport, { timeout: remaining(deadline), signal: own })), refusedForModern);
      this.channels.set(client, new CallChannel(link.transport));
    } catch (error) {
      if (!refusedForModern(error) || this.isClosed()) throw error;
      transport = await this.speakModern(link, deadline, signal);
    }
    guardMessages(transport, (error) => this.failWith(unhandledMessage(error, this.options.redact)));
  }

  /** The 2026 connection to a server that refused the 2025 handshake for it: on the same transport, or the link's 2026 one (remote HTTP); returns the transport it runs on. */
  private async speakModern(link: ServiceLink, deadline: number, signal: AbortSignal): Promise<Transport> {
    const transport = link.modern !== undefined ? await link.modern() : link.transport;
    this.wire.observe(transport); // the 2025 Client's handlers are dropped
    const { version, elicit } = this.options;
    const listChanged = (): void => this.scheduleRefresh();
    const peer = await ModernPeer.connect(transport, { version, capabilities: clientCapabilities(elicit), elicit, timeoutMs: remaining(deadline), signal, listChanged });
    this.client = peer;
    this.channels.set(peer, peer.channel);
    peer.client.onclose = () => {
      if (this.client === peer) this.onClosed();
    };
    return transport;
  }

  /** What an activation failed with; a login wanted comes with where to log in (asked of the server). */
  private async activationFailure(error: unknown, signal: AbortSignal): Promise<Failure> {
    const failure = this.toFailure(error, signal);
    const link = this.link;
    if (!(failure instanceof AuthRequired) || link === undefined) return failure;
    return new AuthRequired(failure.message, await link.authorizationServer(), link.challengedScope);
  }

  private newClient(): Client {
    const capabilities = clientCapabilities(this.options.elicit);
    const client = new Client({ name: 'wispd', version: this.options.version }, { capabilities, jsonSchemaValidator: noSdkValidation });
    this.client = client;
    answerElicitations(client, this.options.elicit, capabilities);
    // A client replaced after an expired session closes too: only the current one counts.
    client.onclose = () => {
      if (this.client === client) this.onClosed();
    };
    client.onerror = () => undefined; // surfaced through the failing request or onclose
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.scheduleRefresh());
    relayNotices(client, this.options.notices, () => this.isClosed());
    return client;
  }

  /** Runs one request; on a remote 404 (our session is forgotten), opens a new session and sends it once more (never seen before). */
  private async withSession<T>(deadline: number, signal: CallSignal, request: (client: Client | ModernPeer) => Promise<T>): Promise<T> {
    try {
      return await request(this.currentClient());
    } catch (error) {
      return request(await this.renewedAfter(error, deadline, signal));
    }
  }

  /** The client requests go to; a closed connection's failure when there is none. */
  private currentClient(): Client | ModernPeer {
    const client = this.client;
    if (client === undefined || this.closed) throw this.closedFailure();
    return client;
  }

  /** After a request failed with `error`: a new session's client if the server forgot ours (a remote 404), else `error` again. */
  private async renewedAfter(error: unknown, deadline: number, signal: CallSignal): Promise<Client | ModernPeer> {
    const old = this.link;
    if (old?.sessionLost(error) !== true || this.isClosed()) throw error;
    this.client = undefined;
    await old.stop(true);
    // Opening a session wants an AbortSignal (the transport, the SDK's initialize); the caller's may be a LightSignal.
    const opening = linkedSignal(signal);
    try {
      await this.initialize(await this.open(opening.signal), deadline, opening.signal);
    } finally {
      opening.dispose();
    }
    const renewed = this.client as Client | ModernPeer | undefined;
    if (renewed === undefined || this.isClosed()) throw this.closedFailure();
    return renewed;
  }

  /** A transport limit tripped: the connection fails now (once), whatever request was running. */
  private failWith(failure: TransportFailure): void {
    if (this.isClosed()) return;
    this.closed = true;
    this.ended = new Failure(failure.code, failure.message);
    this.change.end(new Failure(failure.code, failure.message));
    this.hooks.failed(new Failure(failure.code, failure.message));
    void this.link?.stop(true);
  }

  /** Discovers every page again; on failure the hooks hear `failed`. The tool list counts as changing from this call (made in the same tick as a list_changed is handled) until the new list is in. */
  refresh(): Promise<void> {
    this.refreshAgain = true;
    this.markChanging();
    this.refreshing ??= this.runRefreshes().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Whether `settled` would resolve at once: the list is not changing, and no change ended badly. */
  get isSettled(): boolean {
    return this.change.isSettled;
  }

  /** Whether the tool list is changing: declared changed, the new one not yet in. */
  get isChanging(): boolean {
    return this.change.isChanging;
  }

  /** See ListChange.settled. */
  settled(signal: CallSignal): Promise<void> {
    return this.change.settled(signal);
  }

  /**
   * Sends one tools/call, bound to the tool-list version its approval was given at. On timeout or abort the server is
   * sent notifications/cancelled; the caller then closes this connection. A stop (`cancelCalls`) cancels it the same way.
   * Rejects with a Failure. `abort` (see CallRequest.abort): a stop aborts `signal` through it, and no linked one is made.
   */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number, signal: CallSignal, toolListVersion: number, abort?: (reason: unknown) => void, clock = new CallClock()): Promise<CallToolResult> {
    // The call's own signal: `signal` itself when a stop and the time limit can abort it through `abort`, else a linked one.
    const linked = abort === undefined ? linkedSignal(signal, this.calls.signal, clock.signal) : undefined;
    const own = linked?.signal ?? signal;
    if (abort !== undefined) {
      if (this.calls.signal.aborted) abort(this.calls.signal.reason);
      this.callAborts.add(abort);
      clock.onExpire(abort);
    }
    const deadline = Date.now() + timeoutMs;
    try {
      // The first attempt without a closure: this is every tool call's path (withSession's, inlined).
      try {
        return await this.sendCall(this.currentClient(), name, args, timeoutMs, own, toolListVersion, clock);
      } catch (error) {
        return await this.sendCall(await this.renewedAfter(error, deadline, own), name, args, timeoutMs, own, toolListVersion, clock);
      }
    } catch (error) {
      const stopped = this.calls.signal.aborted && !(error instanceof Failure && error.code === 'APPROVAL_STALE');
      const failure = stopped ? new Failure('CANCELLED', `the call was cancelled: ${String(this.calls.signal.reason)}`) : clock.expiry ?? this.toFailure(error, signal, clock.capMs, 'TOOL_ERROR');
      // Authorization lost (a refresh failed, or the server wants more scope): the service waits for a login.
      if (failure instanceof AuthRequired && !this.isClosed()) {
        this.closed = true;
        this.ended = new AuthRequired(failure.message, null, this.link?.challengedScope ?? null);
        this.change.end(failure);
        this.hooks.failed(this.ended);
        void this.link?.stop(true);
      }
      throw failure;
    } finally {
      clock.stop();
      if (abort !== undefined) {
        clock.offExpire();
        this.callAborts.delete(abort);
      } else linked?.dispose();
    }
  }

  /** What the server declared besides tools (at initialize, or in its 2026 discovery). */
  get offers(): Offers {
    const client = this.client;
    const declared = client instanceof ModernPeer ? client.client.getServerCapabilities() : client?.getServerCapabilities();
    const subscribe = !(client instanceof ModernPeer) && declared?.resources?.subscribe === true;
    return { resources: declared?.resources !== undefined, prompts: declared?.prompts !== undefined, completions: declared?.completions !== undefined, subscribe };
  }

  /**
   * One request of what the server offers besides tools (offerings.ts), within the service's
   * time limit; a stop cancels it. The server's JSON-RPC error is SERVER_REFUSED (the service
   * stays up); rejects with a Failure.
   */
  async offer(kind: OfferKind, params: Record<string, unknown>, signal: CallSignal): Promise<unknown> {
    const timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const linked = linkedSignal(signal, this.calls.signal);
    try {
      return await this.withSession(deadline, linked.signal, (client) => withOwnSignal(linked.signal, (own) => sendOffer(client, kind, params, { timeout: remaining(deadline), signal: own })));
    } catch (error) {
      throw this.calls.signal.aborted ? new Failure('CANCELLED', `cancelled: ${String(this.calls.signal.reason)}`) : this.toFailure(error, linked.signal, timeoutMs, 'SERVER_REFUSED');
    } finally {
      linked.dispose();
    }
  }

  /** One tools/call on `client`'s channel, sent in this tick (see callTool). */
  private sendCall(client: Client | ModernPeer, name: string, args: Record<string, unknown>, timeoutMs: number, signal: CallSignal, toolListVersion: number, clock: CallClock): Promise<CallToolResult> {
    // Checked in the tick that writes the request, so no call leaves at a tool-list version the server has declared changed.
    if (this.change.isChanging || this.toolListVersion !== toolListVersion) {
      throw new Failure('APPROVAL_STALE', `the tool list of ${this.config.name} changed before ${name} was sent (its approval was for version ${toolListVersion}); nothing was sent`);
    }
    const channel = this.channels.get(client);
    if (channel === undefined) throw new Failure('CONNECTION_CLOSED', 'the connection to the server is not ready (a new session is being opened)');
    clock.start(timeoutMs);
    return channel.call(name, args, signal, clock);
  }

  /**
   * The service is being stopped (disabled, edited, deleted): every call still running is
   * cancelled now, so the server is sent notifications/cancelled before stdin is closed and the
   * callers hear CANCELLED with `reason`; calls waiting for a new tool list fail the same way.
   */
  cancelCalls(reason: string): void {
    this.calls.abort(reason);
    for (const abort of [...this.callAborts]) abort(reason);
    this.change.end(new Failure('CANCELLED', `cancelled: ${reason}`));
  }

  /** Stops the process (the ladder; `force` skips to SIGKILL). Idempotent. */
  async stop(force: boolean): Promise<void> {
    this.closed = true;
    this.throttle.stop();
    this.change.end(new Failure('SERVICE_NOT_ACTIVE', `${this.config.name} was stopped`));
    // A link still being opened (a process spawning) is stopped once it is there.
    const link = await this.opening?.catch(() => undefined);
    await link?.stop(force);
  }

  /** A method, not a field read, so the compiler does not assume it is unchanged across awaits. */
  private isClosed(): boolean {
    return this.closed;
  }

  /** A list_changed: a refresh now, or held back (the list changing meanwhile), or, sustained, the end of the connection. */
  private scheduleRefresh(): void {
    if (this.isClosed()) return;
    const heard = this.throttle.heard();
    if (heard.kind === 'now') void this.refresh();
    else if (heard.kind === 'later') this.markChanging();
    else this.failWith({ code: 'LIMIT_EXCEEDED', message: heard.message });
  }

  /** From now until the new list is in (or the connection ends), the tool list is changing. */
  private markChanging(): void {
    if (!this.isClosed()) this.change.mark();
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
        const cause = this.toFailure(error, controller.signal);
        const failure = cause.restated(`tool refresh failed: ${cause.message}`);
        this.closed = true;
        this.ended = failure;
        // The calls waiting for this list fail with the discovery's own error.
        this.change.end(failure);
        this.hooks.failed(failure);
        return;
      }
    }
    // A list_changed held back meanwhile keeps the list changing until its own refresh.
    if (!this.isClosed() && !this.throttle.waiting) this.change.end();
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
        withOwnSignal(signal, (requestSignal) => client.listTools(params, { timeout: remaining(deadline), signal: requestSignal })),
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
    // Before activation is over, a request of it is always pending and fails with why (the
    // SDK rejects it on close; after a failed initialize the SDK closes the client itself):
    // activation reports it, once, and the caller stops what is left.
    if (!this.activated) return;
    const link = this.link;
    this.closed = true;
    const failure = link?.failure;
    this.ended = failure !== undefined ? new Failure(failure.code, failure.message) : this.closedFailure();
    this.change.end(failure !== undefined ? this.ended : this.ended.restated(`${this.ended.message} while its new tool list was awaited`));
    this.hooks.failed(this.ended);
    // Sweep whatever the server left in its process group.
    if (link?.kind === 'local') void link.stop(true);
  }

  /**
   * What went wrong, by where it came from: the transport's own failures, ours (cancel),
   * the server's JSON-RPC error (its answer, whatever its code: `remoteAs`, the service
   * stays up), or the SDK's local errors (its request timeout, the connection closing).
   */
  private toFailure(error: unknown, signal: CallSignal, timeoutMs = this.config.timeoutMs ?? LIMITS.defaultTimeoutMs, remoteAs: WispCode = 'PROTOCOL_ERROR'): Failure {
    const transportFailure = this.link?.failure;
    if (transportFailure !== undefined) return new Failure(transportFailure.code, transportFailure.message);
    if (error instanceof Failure) return error;
    const own = this.link?.explain(error);
    if (own !== undefined) return own;
    if (signal.aborted) return new Failure('CANCELLED', 'cancelled (the client that asked went away, or the service was stopped)');
    if (error instanceof WispError) return failureOf(error.code, error.message);
    if (error instanceof RemoteCallError) return this.serverFailure(error.code, error.remoteMessage, remoteAs);
    if (error instanceof ChannelClosed) return this.closedFailure();
    if (error instanceof McpError) return this.mcpFailure(error, timeoutMs, remoteAs);
    const modern = modernFailure(error, timeoutMs);
    if (modern !== undefined) return modern;
    return new Failure('PROTOCOL_ERROR', error instanceof Error ? error.message : String(error));
  }

  /** An McpError: the server's JSON-RPC answer (as `remoteAs`), or the SDK's own (a timeout, the connection closing). */
  private mcpFailure(error: McpError, timeoutMs: number, remoteAs: WispCode): Failure {
    if (this.wire.fromServer(error)) {
      const prefix = `MCP error ${error.code}: `;
      return this.serverFailure(error.code, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message, remoteAs);
    }
    if (this.wire.lost || error.code === (ErrorCode.ConnectionClosed as number)) return this.closedFailure();
    if (error.code === (ErrorCode.RequestTimeout as number)) {
      return new Failure('TIMEOUT', `the server did not answer within ${timeoutMs} ms`);
    }
    return new Failure('PROTOCOL_ERROR', `the server's answer was refused: ${this.options.redact(error.message).slice(0, MAX_REMOTE_MESSAGE_CHARS)}`);
  }

  /** The server's JSON-RPC error, as `remoteAs`: its message redacted and cut. */
  private serverFailure(code: number, text: string, remoteAs: WispCode): Failure {
    const message = this.options.redact(text).slice(0, MAX_REMOTE_MESSAGE_CHARS);
    return new Failure(remoteAs, `the server answered with an error (JSON-RPC ${code}): ${message}`, { code, message });
  }

  /** Why a request found (or saw) the connection closed: what ended it, else a closed pipe (local) or connection (remote). */
  private closedFailure(): Failure {
    if (this.ended !== undefined) return this.ended;
    if (this.link?.kind === 'remote') return new Failure('CONNECTION_CLOSED', 'the connection to the remote server closed');
    return new Failure('SERVER_EXITED', `the server exited (${this.link?.exitInfo || 'pipes closed'})`);
  }
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}
