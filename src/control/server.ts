import net from 'node:net';
import type { ValidateFunction } from 'ajv';
import { LIMITS, WispError } from '../core/index.js';
import { compileSchema, LightSignal, type CallSignal } from '../util/index.js';
import { Admission, DEFAULT_ADMISSION_LIMITS, type AdmissionLimits, type AdmissionLoad, type Refusal } from './admission.js';
import type { EmittedEvent } from './event-hub.js';
import { Connection } from './rpc-connection.js';
import { BoundedResult, DeferredResult, encode, errorBody, internalError, isRecord, isThenable, PreSerialized, type ErrorBody, type Response } from './rpc-frame.js';
import { checkRequest, failure, replyId, type CheckedRequest } from './rpc-request.js';
import type { CallContext, RpcServerOptions } from './rpc-types.js';

export type { CallContext, MethodEntry, MethodTraits, RpcConnection, RpcLogger, RpcServerOptions } from './rpc-types.js';
export type { AdmissionLoad } from './admission.js';

/**
 * JSON-RPC 2.0 over a Unix socket, one message per line. Our own rather than a JSON-RPC
 * library: what matters here is the transport discipline (an exact per-frame byte cap,
 * per-connection cancellation, bounded output for slow readers, event fan-out), and the
 * dispatch on top of it is small.
 *
 * Nothing a client sends can throw out of here or stall the loop for long: a batch holds at
 * most maxBatchRequests, connections and the bytes of their unfinished frames are capped in
 * total, calls that wait on a human are capped per client and in total (admission.ts), params
 * nesting deeper than maxArgumentDepth are refused before anything looks into them, and
 * every frame we send is serialised under a guard (what cannot be serialised, or would be
 * larger than the frame cap, becomes REPLY_TOO_LARGE for that request; an event that cannot
 * be sent is dropped with a log line).
 *
 * The parts: rpc-connection.ts (one client: frames, batches, writes), rpc-request.ts (the
 * checks before a handler runs), rpc-frame.ts (error bodies, guarded serialising).
 */
export class RpcServer {
  private readonly validators: ParamsChecks;
  private readonly connections = new Set<Connection>();
  private readonly netServer: net.Server;
  private nextId = 1;
  private stopping = false;
  /** Connections, held frame bytes and waiting calls, counted against their caps. */
  private readonly admission: Admission;
  readonly frameBudget: { take(bytes: number): boolean; give(bytes: number): void };
  private readonly staticResults = new Map<string, PreSerialized>();
  /** Refused connections not yet destroyed (see refuseConnection). */
  private readonly lingering = { count: 0 };

  constructor(private readonly options: RpcServerOptions) {
    this.validators = new ParamsChecks(options.methods);
    this.admission = new Admission(admissionLimits(options));
    const admission = this.admission;
    this.frameBudget = { take: (bytes) => admission.takeFrameBytes(bytes), give: (bytes) => admission.giveFrameBytes(bytes) };
    // Paused until admitted: a connection refused for the cap is never read from.
    this.netServer = net.createServer({ pauseOnConnect: true }, (socket) => this.accept(socket));
    // A deferred answer is serialised (and redacted) before any value stops being redacted.
    options.redactor?.beforeRelease?.(() => {
      for (const connection of this.connections) connection.serializeDeferred();
    });
  }

  get clientCount(): number {
    return this.connections.size;
  }

  /** What is counted against the caps now (daemon.status). */
  get load(): AdmissionLoad {
    return this.admission.load;
  }

  get subscriberCount(): number {
    let count = 0;
    for (const connection of this.connections) if (connection.subscribed) count += 1;
    return count;
  }

  /** How many subscribed connections receive events of `type` (all types, or that one among those they asked for); with `counts`, only those it accepts. */
  subscribersOf(type: string, counts: (connection: Connection) => boolean = () => true): number {
    let count = 0;
    for (const connection of this.connections) if (connection.subscribed && (connection.eventTypes === null || connection.eventTypes.has(type)) && counts(connection)) count += 1;
    return count;
  }

  listen(socketPath: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.netServer.once('error', onError);
      this.netServer.listen(socketPath, () => {
        this.netServer.off('error', onError);
        resolve();
      });
    });
  }

  /**
   * Queues an event for every connection subscribed to its type. It is serialised once, when
   * the first of them writes at the end of the turn (after what a call waits for was sent).
   */
  broadcastEvent(emitted: EmittedEvent): void {
    const type = emitted.event.type;
    for (const connection of this.connections) {
      if (connection.subscribed && (connection.eventTypes === null || connection.eventTypes.has(type))) connection.sendEvent(emitted);
    }
  }

  /** Stop accepting; refuse new requests; cancel in-flight work and wait (bounded) for it to settle. */
  async stopAccepting(settleMs: number): Promise<void> {
    this.stopping = true;
    this.netServer.close();
    const pending: Promise<unknown>[] = [];
    for (const connection of this.connections) {
      connection.abortAll('the daemon is stopping');
      pending.push(connection.answered());
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => {
        timer = setTimeout(resolve, settleMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Ends every connection (after flushing what was written to it). */
  async closeConnections(graceMs: number): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.end(graceMs)));
  }

  forget(connection: Connection): void {
    if (!this.connections.delete(connection)) return;
    this.admission.releaseConnection();
    if (connection.gateway !== null) this.admission.leaveGateway(connection.gateway);
  }

  heldFrameRefusal(): Refusal {
    return this.admission.heldFrameRefusal();
  }

  joinGateway(_connection: Connection, id: string): Refusal | null {
    return this.admission.joinGateway(id);
  }

  private accept(socket: net.Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const refusal = this.admission.admitConnection();
    if (refusal !== null) {
      refuseConnection(socket, refusal, this.lingering);
      this.options.logger.warn({ code: 'LIMIT_EXCEEDED', limit: refusal.limit }, 'a connection over the cap was refused');
      return;
    }
    const connection = new Connection(this.nextId++, socket, this, this.options);
    this.connections.add(connection);
  }

  /**
   * Returns the response synchronously when the handler is synchronous. Never throws: a
   * failure of ours becomes INTERNAL_ERROR for that request.
   */
  dispatch(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    try {
      return this.dispatchUnguarded(connection, message, after);
    } catch (error) {
      this.options.logger.error({ client: connection.id, err: error instanceof Error ? error.stack : String(error) }, 'a request could not be dispatched');
      return isRecord(message) && !Object.hasOwn(message, 'id') ? undefined : { jsonrpc: '2.0', id: replyId(message), error: internalError() };
    }
  }

  private dispatchUnguarded(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    const checked = checkRequest(message, {
      methods: this.options.methods,
      validators: this.validators,
      maxDepth: this.options.maxArgumentDepth ?? LIMITS.maxArgumentDepth,
    });
    if (!checked.ok) return checked.response;
    const request = checked.request;
    const refusal = this.refusal(connection, request);
    if (refusal !== undefined) return request.isNotification ? undefined : refusal;
    return this.run(connection, request, after);
  }

  /** Why a checked request may not run now: the daemon is stopping, or too many calls already wait on a human (see Admission.callRefusal). */
  private refusal(connection: Connection, request: CheckedRequest): Response | undefined {
    if (this.stopping) return failure(request.id, 'DAEMON_STOPPING', 'the daemon is shutting down');
    if (request.entry.waits !== true) return undefined;
    const refused = this.admission.callRefusal(connection);
    return refused === null ? undefined : failure(request.id, 'LIMIT_EXCEEDED', refused.message, { limit: refused.limit, max: refused.max });
  }

  /** Runs the handler; its outcome (or throw) becomes the response, synchronously when the handler is. */
  private run(connection: Connection, request: CheckedRequest, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    const running = new RunningRequest(connection, request, after);
    if (request.entry.waits === true) {
      connection.pendingCalls += 1;
      this.admission.startCall(connection);
    }
    let out: unknown;
    try {
      out = request.entry.handle(request.params, running);
    } catch (error) {
      return this.settle(running, false, error);
    }
    if (!isThenable(out)) return this.settle(running, true, out);
    // A request that runs on is aborted with its client's others, and can be cancelled by id (rpc.cancel), until settle forgets it.
    connection.running.add(running);
    return this.finish(running, out);
  }

  /** An asynchronous handler's outcome, as the response. */
  private async finish(running: RunningRequest, out: PromiseLike<unknown>): Promise<Response | undefined> {
    let value: unknown;
    try {
      value = await out;
    } catch (error) {
      return this.settle(running, false, error);
    }
    return this.settle(running, true, value);
  }

  /** The request is over: it is forgotten, and its outcome (a value, or what it threw) becomes the response. */
  private settle(running: RunningRequest, ok: boolean, outcome: unknown): Response | undefined {
    const { connection, request } = running;
    running.forget();
    if (request.entry.waits === true) {
      connection.pendingCalls -= 1;
      this.admission.endCall(connection);
    }
    if (request.isNotification) return undefined;
    if (ok) return { jsonrpc: '2.0', id: request.id, result: this.resultOf(request, outcome) };
    running.after.length = 0;
    return { jsonrpc: '2.0', id: request.id, error: this.toErrorBody(outcome, request.method) };
  }

  /** The result as it is serialised: see MethodTraits.staticResult and boundedResult. */
  private resultOf(request: CheckedRequest, outcome: unknown): unknown {
    if (request.entry.staticResult === true) return this.preSerialized(request.method, outcome);
    const result = request.entry.boundedResult === true ? new BoundedResult(outcome) : outcome;
    return request.entry.deferredResult === true ? new DeferredResult(result) : result;
  }

  /** A static method's result, serialised the first time (if it can be: else it goes the usual, guarded way). */
  private preSerialized(method: string, value: unknown): unknown {
    const known = this.staticResults.get(method);
    if (known !== undefined) return known;
    const encoded = encode(value, Number.MAX_SAFE_INTEGER);
    if (!encoded.ok) return value;
    const serialized = new PreSerialized(encoded.text, encoded.bytes);
    this.staticResults.set(method, serialized);
    return serialized;
  }

  private toErrorBody(error: unknown, method: string): ErrorBody {
    if (error instanceof WispError) return errorBody(error.code, error.message, error.details);
    this.options.logger.error({ method, err: error instanceof Error ? error.stack : String(error) }, 'method failed unexpectedly');
    return internalError();
  }
}

/** The caps: the options' own, else LIMITS. */
function admissionLimits(options: RpcServerOptions): AdmissionLimits {
  const limits: Record<string, number> = { ...DEFAULT_ADMISSION_LIMITS };
  for (const name of Object.keys(DEFAULT_ADMISSION_LIMITS) as (keyof AdmissionLimits)[]) {
    const value = options[name];
    if (value !== undefined) limits[name] = value;
  }
  return limits as unknown as AdmissionLimits;
}

/** Past this many refused connections waiting to be destroyed at once (a flood of connections), another is destroyed as soon as its answer is written. */
const MAX_LINGERING = 64;
/** What a refused connection may send before it is destroyed: read and dropped, never kept. */
const MAX_REFUSED_BYTES = 64 * 1024;

/**
 * A connection over the cap: one LIMIT_EXCEEDED (id null), then closed. Not at once: a
 * client whose request is still on its way would get EPIPE on that write before it reads
 * why. So the socket waits for the client to hang up (it does once it reads the refusal),
 * reading and dropping what it sends meanwhile, and is destroyed after a second, after
 * MAX_REFUSED_BYTES, or, during a flood of refusals (`lingering` at MAX_LINGERING), as soon
 * as the answer is written.
 */
function refuseConnection(socket: net.Socket, refusal: Refusal, lingering: { count: number }): void {
  socket.on('error', () => undefined);
  const line = `${JSON.stringify({ jsonrpc: '2.0', id: null, error: errorBody('LIMIT_EXCEEDED', refusal.message, { limit: refusal.limit, max: refusal.max }) })}\n`;
  if (lingering.count >= MAX_LINGERING) {
    socket.end(line, () => socket.destroy());
    return;
  }
  lingering.count += 1;
  const timer = setTimeout(() => socket.destroy(), 1000);
  timer.unref();
  socket.once('close', () => {
    lingering.count -= 1;
    clearTimeout(timer);
  });
  let read = 0;
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_REFUSED_BYTES) socket.destroy();
  });
  socket.once('end', () => socket.destroy());
  socket.end(line);
  socket.resume();
}

/**
 * Each method's params check: the one generated at build time when the method has one, else
 * its schema compiled when the method is first called (compiling all of them in the
 * constructor cost every cold start tens of milliseconds, for methods most runs never see).
 */
class ParamsChecks {
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly methods: RpcServerOptions['methods']) {}

  get(method: string): ValidateFunction | undefined {
    const known = this.compiled.get(method);
    if (known !== undefined) return known;
    const entry = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    if (entry === undefined) return undefined;
    const validate = entry.paramsCheck ?? compileSchema(entry.paramsSchema, 'strict');
    this.compiled.set(method, validate);
    return validate;
  }
}

/**
 * One request while it runs: its handler's context, and what aborts it (the client going
 * away, rpc.cancel, the handler itself). One object, not a closure each for the context, the
 * abort and the outcome: a tool call is in flight across a scavenge, and what it holds is promoted.
 * Its signals are made when the handler first asks for one (most handlers answer at once and
 * never do); one made after the abort is born aborted, with the first reason.
 */
class RunningRequest implements CallContext {
  private controller: AbortController | undefined;
  private light: LightSignal | undefined;
  private aborted: { readonly reason: unknown } | undefined;

  constructor(
    readonly connection: Connection,
    readonly request: CheckedRequest,
    readonly after: (() => void)[],
  ) {}

  /** A notification's is null. */
  get id(): string | number | null {
    return this.request.isNotification ? null : this.request.id;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      this.bornAborted();
      if (this.aborted !== undefined) this.controller.abort(this.aborted.reason);
    }
    return this.controller.signal;
  }

  get callSignal(): CallSignal {
    if (this.light === undefined) {
      this.light = new LightSignal();
      this.bornAborted();
      if (this.aborted !== undefined) this.light.abort(this.aborted.reason);
    }
    return this.light;
  }

  abort(reason: unknown): void {
    if (this.aborted !== undefined) return;
    this.aborted = { reason };
    this.controller?.abort(reason);
    this.light?.abort(reason);
  }

  afterResponse(fn: () => void): void {
    this.after.push(fn);
  }

  /** Answered: the connection no longer aborts it. */
  forget(): void {
    this.connection.running.delete(this);
  }

  /** A signal asked for after the client went away (or the daemon began stopping) is aborted from the start. */
  private bornAborted(): void {
    const reason = this.connection.abortReason;
    if (reason !== undefined) this.abort(reason);
  }
}
