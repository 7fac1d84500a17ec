import type { ValidateFunction } from 'ajv';
import type { ErrorCode } from '../core/index.js';
import type { CallSignal } from '../util/index.js';

/** The shapes the socket server shares with the daemon that gives it its methods. */

export interface RpcLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RpcConnection {
  readonly id: number;
  subscribed: boolean;
  /** The event types this subscriber asked for; null: all of them. */
  eventTypes: ReadonlySet<string> | null;
  notify(method: string, params: unknown): void;
  /** A notification whose params are already serialised (a held event). */
  notifySerialized(method: string, params: string): void;
  /** The name the client gave itself (client.identify); null until it does. */
  clientName: string | null;
  /** Aborts this client's own request `id` while it runs (rpc.cancel), with `reason`; false when none of that id runs. */
  cancelRequest(id: string | number, reason: unknown): boolean;
  /**
   * Counts this connection as one of gateway `id`'s (client.identify): its waiting calls and
   * its place count with every other connection of that gateway (see admission.ts). Throws
   * INVALID_PARAMS when it already joined one or has calls waiting; LIMIT_EXCEEDED when the
   * gateway (or the gateways together) has its connections already, and the connection is
   * then closed after that answer.
   */
  joinGateway(id: string): void;
  /** Runs `fn` once when this connection closes (at once when it has closed already). */
  whenClosed(fn: () => void): void;
}

export interface CallContext {
  /** Aborted when the client disconnects or the daemon stops. */
  readonly signal: AbortSignal;
  /**
   * Aborted with `signal`, for the same reasons, but a LightSignal (util/light-signal.ts):
   * for the tool-call path, which never hands it to an API that needs an AbortSignal.
   */
  readonly callSignal: CallSignal;
  /** Aborts `signal` and `callSignal` from inside (work this request waits on ended it), with `reason`. */
  abort(reason: unknown): void;
  readonly connection: RpcConnection;
  /** Runs right after the response is written, in the same tick (for replay-then-subscribe). */
  afterResponse(fn: () => void): void;
}

/**
 * How a method's params are checked: a JSON Schema, compiled on the method's first call, or a
 * check generated from it at build time (scripts/validators.mjs), so that nothing is compiled.
 */
export type ParamsRule = { readonly paramsSchema: object; readonly paramsCheck?: undefined } | { readonly paramsCheck: ValidateFunction; readonly paramsSchema?: undefined };

export type MethodEntry = ParamsRule & MethodTraits;

export interface MethodTraits {
  /** The code for a param nesting deeper than maxArgumentDepth (default INVALID_PARAMS). */
  readonly tooDeep?: ErrorCode;
  /** The result never changes while the server runs: it is serialised once, then reused. */
  readonly staticResult?: boolean;
  /**
   * The result is bounded by construction, at most a few megabytes (a tool call's by the
   * server frame it came in, an approval's by the argument cap): it is serialised without the
   * guard that bounds the work spent on an unbounded one (see encode). Its size is still checked.
   */
  readonly boundedResult?: boolean;
  /**
   * The call may wait long (on a human): counted against maxPendingCallsPerClient and
   * maxPendingCalls, and refused with LIMIT_EXCEEDED past them. Other methods are never
   * refused for load, so a full daemon can still be asked, answered and stopped.
   */
  readonly waits?: boolean;
  /**
   * The result is serialised when the connection writes the turn's frames (at the end of the
   * turn), not when the handler returns: the handler must return a value nothing changes
   * afterwards. approvals.respond's answer (the approval's view) is then serialised after the
   * call it approved was sent to its server, not on its way (see DeferredResult).
   */
  readonly deferredResult?: boolean;
  /** A synchronous handler's response is written in the same tick as the call. */
  readonly handle: (params: unknown, ctx: CallContext) => unknown;
}

/** What every frame is checked with before it is written: see RpcServerOptions.redactor. */
export interface FrameRedactor {
  /** How many values it looks for (none: nothing to check). */
  readonly size: number;
  /** Whether no known secret value can occur in a string of the value this is the JSON text of (false: unsure). */
  clean(text: string): boolean;
  /** The value with every string (keys included) redacted. */
  redactValue<T>(value: T): T;
  /** `listener` runs before a value may stop being redacted: what waits to be serialised (a deferred answer) is serialised then. */
  beforeRelease?(listener: () => void): void;
}

export interface RpcServerOptions {
  readonly methods: Readonly<Record<string, MethodEntry>>;
  /**
   * Every answer and notification is checked against it as it is serialised, whatever
   * method or path produced it: when its text may hold a known secret value, the result,
   * error or params is redacted and serialised again (the request id, the client's own, is left).
   * So is one refused for its size (redacted, it may fit; and the refusal must not tell the
   * unredacted size), and a held event replayed (a value may have become known since).
   */
  readonly redactor?: FrameRedactor;
  readonly maxFrameBytes: number;
  readonly maxBacklogBytes: number;
  readonly logger: RpcLogger;
  /** Defaults: the LIMITS of the same names. */
  readonly maxBatchRequests?: number;
  readonly maxPendingCallsPerClient?: number;
  readonly maxPendingCalls?: number;
  readonly maxGatewayPendingCalls?: number;
  readonly maxConnections?: number;
  readonly maxGatewayConnections?: number;
  readonly maxConnectionsPerGateway?: number;
  readonly maxHeldFrameBytes?: number;
  readonly maxArgumentDepth?: number;
}
