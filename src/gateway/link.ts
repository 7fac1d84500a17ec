import { randomBytes } from 'node:crypto';
import { WispClient } from '../control/client.js';
import { WispError, type WispEvent } from '../core/index.js';

/**
 * A gateway without a daemon tries the socket again after RECONNECT_FIRST_MS, then after
 * twice as long each time, up to RECONNECT_MAX_MS (and at once before a call). Never faster:
 * a socket that accepts and drops every connection costs one attempt per step, not a spin.
 */
export const RECONNECT_FIRST_MS = 100;
export const RECONNECT_MAX_MS = 1000;

/** The events a gateway follows: the catalog and what it offers (list_changed; a profile's change too), approvals (progress, elicitation), the daemon stopping. */
export const CATALOG_EVENTS: ReadonlySet<string> = new Set(['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'profile.changed']);
const EVENT_TYPES = ['service.tools', 'service.state', 'tools.held', 'tools.accepted', 'profile.changed', 'approval.requested', 'approval.resolved', 'tool.call.progress', 'daemon.stopping', 'service.log', 'service.offerings'] as const;
/** Followed too once the MCP client declared it can answer elicitations (followElicitations): the daemon counts a subscriber as someone who could answer. */
const ELICITATION_EVENTS = ['elicitation.requested', 'elicitation.resolved'] as const;

/**
 * Where the daemon's socket is: a path, or a lookup run again before each connection attempt
 * (`wispctl mcp serve` without --socket: the default socket, else the daemon's pointer in the
 * data dir, control/paths.ts locatePaths), so a daemon restarted on another socket is found.
 * A lookup may throw (UNSAFE_FILE: a pointer that fails its checks); that attempt then fails.
 */
export type SocketLocator = string | (() => string);

/** The codes that mean "no daemon to ask now" (not running, stopping, or the connection went away): the daemon is away, not broken. */
export function daemonAway(error: unknown): boolean {
  return error instanceof WispError && (error.code === 'DAEMON_NOT_RUNNING' || error.code === 'DAEMON_STOPPING');
}

/**
 * A gateway's id (client.identify's `gateway`): 128 random bits, made once per `wispctl mcp
 * serve` process (with --http, with its one token) and given on each of its connections, so
 * the daemon counts all of them as one client (its 64 waiting calls, its 40 connections).
 * Random and kept in memory only (no argv, no environment, never logged; the daemon never
 * sends it back): no other program can learn it to count against this gateway.
 */
export function newGatewayId(): string {
  return randomBytes(16).toString('base64url');
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
  /** Whether the elicitation events are followed (the MCP client can answer a server's elicitation). */
  private elicitations = false;

  private onChange: () => void = () => undefined;
  private readonly locate: () => string;
  /** The socket last tried (or found): what "no daemon answers on ..." names. */
  private lastSocket: string;
  /** Why the last lookup of the socket failed (a pointer refused as unsafe), until one succeeds. */
  private lookupError: WispError | null = null;
  /** The daemon's last refusal of a connection (LIMIT_EXCEEDED: this gateway or all of them have their connections): what a call is told while it lasts. */
  private refused: WispError | null = null;

  /** `gateway`: the id every link of this gateway gives (newGatewayId); a link alone is a gateway of its own. */
  constructor(
    socket: SocketLocator,
    private readonly gateway: string = newGatewayId(),
  ) {
    this.locate = typeof socket === 'string' ? () => socket : socket;
    this.lastSocket = typeof socket === 'string' ? socket : '(not looked up yet)';
  }

  /** The daemon's socket as last looked up. */
  get socket(): string {
    return this.lastSocket;
  }

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
    if (this.client === null && this.lookupError !== null) throw this.lookupError;
    if (this.client === null) throw this.refused ?? new WispError('DAEMON_NOT_RUNNING', `no daemon answers on ${this.socket} (start it with: wispctl daemon start)`);
    return this.client;
  }

  /**
   * Follows the elicitation events from now on, on this connection and every later one: the
   * MCP client declared it can answer a server's elicitation (gateway/elicit-relay.ts). Only
   * then: the daemon puts a server's request before a human only while a subscriber could answer it.
   */
  followElicitations(): void {
    if (this.elicitations) return;
    this.elicitations = true;
    // A failure here is the connection going away: the next one subscribes with them (attempt).
    if (this.client !== null) this.subscribe(this.client).catch(() => undefined);
  }

  /** Subscribes to EVENT_TYPES (and the elicitations'); a daemon older than profiles refuses profile.changed, and is asked for the rest (it has no profiles to change). */
  private async subscribe(client: WispClient): Promise<unknown> {
    const types = [...EVENT_TYPES, ...(this.elicitations ? ELICITATION_EVENTS : [])];
    try {
      return await client.call('events.subscribe', { types });
    } catch (error) {
      if (!(error instanceof WispError && error.code === 'INVALID_PARAMS')) throw error;
      return client.call('events.subscribe', { types: types.filter((type) => type !== 'profile.changed') });
    }
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
      this.lastSocket = this.lookUp();
      client = await WispClient.connect(this.lastSocket);
    } catch {
      this.refused = null;
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
      // In this order on the socket, so no call of this connection goes unnamed or uncounted as this gateway's.
      await Promise.all([this.identifyConnection(client), this.subscribe(client)]);
    } catch (error) {
      // The connection went away meanwhile, or the daemon refused (it is stopping; this gateway has its connections): try again later.
      if (error instanceof WispError && error.code === 'LIMIT_EXCEEDED') this.refused = error;
      this.drop(client);
      return;
    }
    if (this.client !== client) return;
    this.refused = null;
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

  /** The socket to try now; a lookup that throws is kept (current() reports it) and fails this attempt. */
  private lookUp(): string {
    try {
      const socket = this.locate();
      this.lookupError = null;
      return socket;
    } catch (error) {
      this.lookupError = error instanceof WispError ? error : new WispError('DAEMON_NOT_RUNNING', `the daemon's socket could not be looked up: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }

  /** Gives the daemon this gateway's id (and the name, when known) on a new connection. */
  private async identifyConnection(client: WispClient): Promise<void> {
    try {
      this.clientId = (await client.call('client.identify', { gateway: this.gateway, ...(this.name !== null ? { name: this.name } : {}) })).clientId;
    } catch (error) {
      // A daemon older than gateway ids refuses the field: it has no gateway caps to count against either, so this connection is a client alone there.
      if (!(error instanceof WispError && error.code === 'INVALID_PARAMS')) throw error;
      this.clientId = this.name !== null ? (await client.call('client.identify', { name: this.name })).clientId : (await client.call('daemon.status')).you.clientId;
    }
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
