import { LIMITS } from '../core/index.js';

/**
 * Who may come in and how much they may hold: the socket's caps on connections, on the bytes
 * of unfinished frames, and on calls that wait on a human. Pure bookkeeping (no I/O), so the
 * rules are tested alone; the server asks before it accepts, buffers or runs, and tells it
 * when each ends.
 *
 * Peers cannot be told apart by the kernel here (Node has no SO_PEERCRED, and the socket is
 * 0600: every peer is the user), so "one client" is what a connection says it belongs to: a
 * gateway (`wispctl mcp serve`) names one random id for all its connections in
 * client.identify, and they count as one client; any other connection is a client alone.
 *
 * Why an id cannot be used to escape a cap: claiming a gateway id only ever adds a connection
 * to that gateway's shared counts, never a new allowance. A connection that claims another
 * gateway's id (it would have to learn it first: the daemon never sends an id to anyone, not
 * in replies, events or logs) takes from that gateway's 64 calls and 40 connections, and from
 * the gateways' shared 512 calls and 96 connections, never from the calls kept for clients
 * that are not gateways. Fresh ids for each connection buy nothing either: the gateways'
 * shared caps still bound them all. A connection that claims no id is counted alone, as any
 * socket client is (64 calls), and may use the reserve: that is the user's own wispctl.
 */

/** The caps, LIMITS by default (tests use small ones). */
export interface AdmissionLimits {
  readonly maxConnections: number;
  readonly maxGatewayConnections: number;
  readonly maxConnectionsPerGateway: number;
  readonly maxHeldFrameBytes: number;
  readonly maxPendingCallsPerClient: number;
  readonly maxPendingCalls: number;
  readonly maxGatewayPendingCalls: number;
}

export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = {
  maxConnections: LIMITS.maxConnections,
  maxGatewayConnections: LIMITS.maxGatewayConnections,
  maxConnectionsPerGateway: LIMITS.maxConnectionsPerGateway,
  maxHeldFrameBytes: LIMITS.maxHeldFrameBytes,
  maxPendingCallsPerClient: LIMITS.maxPendingCallsPerClient,
  maxPendingCalls: LIMITS.maxPendingCalls,
  maxGatewayPendingCalls: LIMITS.maxGatewayPendingCalls,
};

/** Why something was refused: LIMIT_EXCEEDED, with the limit's name (a key of LIMITS) and value for data. */
export interface Refusal {
  readonly message: string;
  readonly limit: keyof AdmissionLimits;
  readonly max: number;
}

/** What the calls' caps need to know of a connection. */
export interface CallCounter {
  /** Its own calls that wait, not yet answered. */
  readonly pendingCalls: number;
  /** The gateway it joined (client.identify), or null: a client alone. */
  readonly gateway: string | null;
}

/** One gateway's connections and waiting calls; kept while either is above zero. */
interface GatewayCount {
  connections: number;
  pendingCalls: number;
}

/** The daemon's counts now, for daemon.status (and the tests that check memory is given back). */
export interface AdmissionLoad {
  readonly connections: number;
  readonly heldFrameBytes: number;
  readonly pendingCalls: number;
  readonly gateways: number;
  readonly gatewayConnections: number;
  readonly gatewayPendingCalls: number;
}

export class Admission {
  private connections = 0;
  private heldFrameBytes = 0;
  private pendingCalls = 0;
  private gatewayConnections = 0;
  private gatewayPendingCalls = 0;
  private readonly gateways = new Map<string, GatewayCount>();

  constructor(readonly limits: AdmissionLimits = DEFAULT_ADMISSION_LIMITS) {}

  get load(): AdmissionLoad {
    return {
      connections: this.connections,
      heldFrameBytes: this.heldFrameBytes,
      pendingCalls: this.pendingCalls,
      gateways: this.gateways.size,
      gatewayConnections: this.gatewayConnections,
      gatewayPendingCalls: this.gatewayPendingCalls,
    };
  }

  /** A new connection: counted, or refused (nothing counted). */
  admitConnection(): Refusal | null {
    const max = this.limits.maxConnections;
    if (this.connections >= max) {
      return { limit: 'maxConnections', max, message: `the daemon already has ${max} socket connections open; close some and try again` };
    }
    this.connections += 1;
    return null;
  }

  releaseConnection(): void {
    this.connections -= 1;
  }

  /** A connection names its gateway: counted as one of its connections, or refused (nothing counted). */
  joinGateway(id: string): Refusal | null {
    const known = this.gateways.get(id);
    const perGateway = this.limits.maxConnectionsPerGateway;
    if (known !== undefined && known.connections >= perGateway) {
      return { limit: 'maxConnectionsPerGateway', max: perGateway, message: `this gateway already has ${perGateway} connections to the daemon; close some of its sessions` };
    }
    const total = this.limits.maxGatewayConnections;
    if (this.gatewayConnections >= total) {
      return { limit: 'maxGatewayConnections', max: total, message: `MCP gateways together already have ${total} connections to the daemon; close some of their sessions` };
    }
    const count = known ?? { connections: 0, pendingCalls: 0 };
    count.connections += 1;
    this.gateways.set(id, count);
    this.gatewayConnections += 1;
    return null;
  }

  /** A connection of that gateway closed. */
  leaveGateway(id: string): void {
    const count = this.gateways.get(id);
    if (count === undefined) return;
    count.connections -= 1;
    this.gatewayConnections -= 1;
    this.forgetIfIdle(id, count);
  }

  /**
   * `bytes` more of an unfinished frame are about to be held: true (and counted) when the
   * shared budget has room. Chunks arrive in the order the sockets are read, so a connection
   * that stalls its frame keeps only what it got in before the budget filled.
   */
  takeFrameBytes(bytes: number): boolean {
    if (this.heldFrameBytes + bytes > this.limits.maxHeldFrameBytes) return false;
    this.heldFrameBytes += bytes;
    return true;
  }

  /** Held frame bytes let go (the frame ended, failed, or its connection closed). */
  giveFrameBytes(bytes: number): void {
    this.heldFrameBytes -= bytes;
  }

  /** The refusal of a frame that would pass the budget, for the client's error. */
  heldFrameRefusal(): Refusal {
    const max = this.limits.maxHeldFrameBytes;
    return {
      limit: 'maxHeldFrameBytes',
      max,
      message: `the daemon already holds ${max} bytes of unfinished frames across its connections, and this connection's frame would pass that; closing this connection (send each request as one whole line)`,
    };
  }

  /** A call that waits may start for `client`: null, or why not. Checked in order: this client's cap, the gateways' share, the daemon's. */
  callRefusal(client: CallCounter): Refusal | null {
    const perClient = this.limits.maxPendingCallsPerClient;
    const gateway = client.gateway === null ? undefined : this.gateways.get(client.gateway);
    if (gateway !== undefined) {
      if (gateway.pendingCalls >= perClient) {
        return { limit: 'maxPendingCallsPerClient', max: perClient, message: `this gateway already has ${perClient} calls waiting for an answer (its sessions count as one client); wait for some to finish` };
      }
      const share = this.limits.maxGatewayPendingCalls;
      if (this.gatewayPendingCalls >= share) {
        return {
          limit: 'maxGatewayPendingCalls',
          max: share,
          message: `MCP gateways together already have ${share} calls waiting for an answer (the rest is kept for your own clients); try again later`,
        };
      }
    } else if (client.pendingCalls >= perClient) {
      return { limit: 'maxPendingCallsPerClient', max: perClient, message: `this client already has ${perClient} calls waiting for an answer; wait for some to finish` };
    }
    const total = this.limits.maxPendingCalls;
    if (this.pendingCalls >= total) return { limit: 'maxPendingCalls', max: total, message: `the daemon already has ${total} calls waiting for an answer; try again later` };
    return null;
  }

  /** A call that waits started (after callRefusal said yes). */
  startCall(client: CallCounter): void {
    this.pendingCalls += 1;
    const gateway = client.gateway === null ? undefined : this.gateways.get(client.gateway);
    if (gateway === undefined) return;
    gateway.pendingCalls += 1;
    this.gatewayPendingCalls += 1;
  }

  /** A call that waits ended; `client.gateway` is the one it started under (a connection never changes gateway). */
  endCall(client: CallCounter): void {
    this.pendingCalls -= 1;
    const id = client.gateway;
    const gateway = id === null ? undefined : this.gateways.get(id);
    if (id === null || gateway === undefined) return;
    gateway.pendingCalls -= 1;
    this.gatewayPendingCalls -= 1;
    this.forgetIfIdle(id, gateway);
  }

  private forgetIfIdle(id: string, count: GatewayCount): void {
    if (count.connections === 0 && count.pendingCalls === 0) this.gateways.delete(id);
  }
}
