import { WispClient } from '../control/client.js';
import { WispError, type WispEvent } from '../core/index.js';

/**
 * A gateway without a daemon tries the socket again after RECONNECT_FIRST_MS, then after
 * twice as long each time, up to RECONNECT_MAX_MS (and at once before a call). Never faster:
 * a socket that accepts and drops every connection costs one attempt per step, not a spin.
 */
export const RECONNECT_FIRST_MS = 100;
export const RECONNECT_MAX_MS = 1000;

/** The events a gateway follows: the catalog and what it offers (list_changed), approvals (progress, elicitation), the daemon stopping. */
export const CATALOG_EVENTS: ReadonlySet<string> = new Set(['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'model.settings']);
const EVENT_TYPES = ['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'model.settings', 'approval.requested', 'approval.resolved', 'daemon.stopping'] as const;

/** The codes that mean "no daemon to ask now" (not running, stopping, or the connection went away): the daemon is away, not broken. */
export function daemonAway(error: unknown): boolean {
  return error instanceof WispError && (error.code === 'DAEMON_NOT_RUNNING' || error.code === 'DAEMON_STOPPING');
}

/**
 * One gateway connection's link to the daemon: one socket connection, so one client in
 * events and the audit log, named after the MCP client (client.identify). The daemon may go
 * away at any time (daemon.stopping, or the socket closes: a stop, a restart, a SIGKILL):
 * the link then lets that connection go, runs `onChange` (no tools now), and tries again
 * (RECONNECT_FIRST_MS, doubling up to RECONNECT_MAX_MS). Each new connection is named again
 * and subscribed again, and `onChange` runs again (the catalog may have changed meanwhile).
 * Nothing here throws or rejects out of an event or a timer: a daemon going away is a state.
 */
export class DaemonLink {
  private client: WispClient | null = null;
  private clientId: string | null = null;
  private name: string | null = null;
  private connecting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private delay = RECONNECT_FIRST_MS;
  /** Connections of a daemon that said it stops, kept until it closes them (or this link closes). */
  private readonly leaving = new Set<WispClient>();
  private readonly listeners = new Set<(event: WispEvent) => void>();

  private onChange: () => void = () => undefined;

  constructor(readonly socket: string) {}

  /** What to do when the daemon went away, or a connection is made after none could be or after one was lost: look at the catalog again. */
  setChangeHandler(handler: () => void): void {
    this.onChange = handler;
  }

  get connected(): boolean {
    return this.client !== null;
  }

  /** This connection's client id at the daemon (`client-N (mcp:NAME)`), once connected and named. */
  get me(): string | null {
    return this.clientId;
  }

  /** Connects if it is not connected (one attempt; a failure schedules the next). */
  connect(): Promise<void> {
    if (this.closed || this.client !== null) return Promise.resolve();
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Names this connection (once the MCP client said who it is); sent at once when connected, and on every reconnect. */
  identify(name: string): void {
    if (this.name !== null) return;
    this.name = name;
    // A failure here is the connection going away: the next one is named (attempt).
    if (this.client !== null) this.sendName(this.client).catch(() => undefined);
  }

  /** The connected client, or DAEMON_NOT_RUNNING (after one more attempt to connect). */
  async current(): Promise<WispClient> {
    await this.connect();
    if (this.client === null) throw new WispError('DAEMON_NOT_RUNNING', `no daemon answers on ${this.socket} (start it with: wispctl daemon start)`);
    return this.client;
  }

  onEvent(listener: (event: WispEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    const clients = [...this.leaving, ...(this.client !== null ? [this.client] : [])];
    this.client = null;
    this.leaving.clear();
    await Promise.all(clients.map((client) => client.close()));
  }

  private async attempt(): Promise<void> {
    let client: WispClient;
    try {
      client = await WispClient.connect(this.socket);
    } catch {
      this.missed = true;
      this.retryLater();
      return;
    }
    if (this.closed) {
      await client.close();
      return;
    }
    client.onEvent((event) => {
      if (event.type === 'daemon.stopping') {
        // It refuses every request from now on and closes this connection soon: away already.
        // The connection stays open until the daemon closes it, for its last answers (a waiting call's CANCELLED).
        if (this.client === client) {
          this.leaving.add(client);
          client.onClose(() => this.leaving.delete(client));
        }
        this.drop(client, false);
        return;
      }
      for (const listener of this.listeners) listener(event);
    });
    client.onClose(() => this.drop(client));
    this.client = client;
    try {
      // In this order on the socket, so no call of this connection goes unnamed.
      const named = this.name !== null ? this.sendName(client) : client.call('daemon.status').then((status) => (this.clientId = status.you.clientId));
      await Promise.all([named, client.call('events.subscribe', { types: [...EVENT_TYPES] })]);
    } catch {
      // The connection went away meanwhile, or the daemon refused (it is stopping): try again later.
      this.drop(client);
      return;
    }
    if (this.client !== client) return;
    this.delay = RECONNECT_FIRST_MS;
    if (this.missed) this.onChange();
    this.missed = false;
  }

  /** True after a connect failed or a connection was lost: the next connection announces itself (onChange). */
  private missed = false;

  /**
   * Lets `client` go when it is the current one (the daemon stops, the socket closed, its
   * setup failed), closed unless `close` is false: its calls still waiting end with the
   * daemon's answer or DAEMON_NOT_RUNNING.
   * Tells the server (no tools now) once, and tries again later.
   */
  private drop(client: WispClient, close = true): void {
    if (this.client !== client) return;
    this.client = null;
    this.clientId = null;
    this.missed = true;
    if (close) void client.close();
    if (this.closed) return;
    this.retryLater();
    this.onChange();
  }

  private async sendName(client: WispClient): Promise<void> {
    if (this.name === null) return;
    this.clientId = (await client.call('client.identify', { name: this.name })).clientId;
  }

  private retryLater(): void {
    if (this.closed || this.timer !== null) return;
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
    // A gateway whose MCP client went away must not be kept alive by this timer.
    this.timer.unref();
  }
}
