import { WispClient } from '../control/client.js';
import { WispError, type WispEvent } from '../core/index.js';

/** How often a gateway without a daemon tries the socket again. */
export const RECONNECT_MS = 1000;

/** The events a gateway follows: the catalog and what it offers (list_changed), approvals (progress, elicitation). */
export const CATALOG_EVENTS: ReadonlySet<string> = new Set(['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'model.settings']);
const EVENT_TYPES = ['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'model.settings', 'approval.requested', 'approval.resolved'] as const;

/**
 * One gateway connection's link to the daemon: one socket connection, so one client in
 * events and the audit log, named after the MCP client (client.identify). While the daemon
 * is not running it tries again every RECONNECT_MS (and at once before a call); each new
 * connection is named again and subscribed again, and `onReconnect` runs (the catalog may
 * have changed meanwhile).
 */
export class DaemonLink {
  private client: WispClient | null = null;
  private clientId: string | null = null;
  private name: string | null = null;
  private connecting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly listeners = new Set<(event: WispEvent) => void>();

  private onReconnect: () => void = () => undefined;

  constructor(readonly socket: string) {}

  /** What to do when a connection is made after none could be, or after one was lost: look at the catalog again. */
  setReconnectHandler(handler: () => void): void {
    this.onReconnect = handler;
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
    if (this.client !== null) void this.sendName(this.client);
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
    const client = this.client;
    this.client = null;
    await client?.close();
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
      for (const listener of this.listeners) listener(event);
    });
    client.onClose((error) => {
      if (this.client !== client) return;
      this.client = null;
      this.clientId = null;
      this.missed = true;
      if (error !== undefined) this.retryLater();
    });
    this.client = client;
    try {
      // In this order on the socket, so no call of this connection goes unnamed.
      const named = this.name !== null ? this.sendName(client) : client.call('daemon.status').then((status) => (this.clientId = status.you.clientId));
      await Promise.all([named, client.call('events.subscribe', { types: [...EVENT_TYPES] })]);
    } catch {
      // The connection went away meanwhile: onClose scheduled the next attempt.
      return;
    }
    if (this.missed) this.onReconnect();
    this.missed = false;
  }

  /** True after a connect failed or a connection was lost: the next connection announces itself (onReconnect). */
  private missed = false;

  private async sendName(client: WispClient): Promise<void> {
    if (this.name === null) return;
    this.clientId = (await client.call('client.identify', { name: this.name })).clientId;
  }

  private retryLater(): void {
    if (this.closed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, RECONNECT_MS);
    // A gateway whose MCP client went away must not be kept alive by this timer.
    this.timer.unref();
  }
}
