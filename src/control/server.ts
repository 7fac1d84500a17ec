import net from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LineSplitter } from '../util/index.js';
import { ERROR_CATALOG, JSONRPC_INTERNAL_ERROR, WispError, type ErrorCode } from './errors.js';

/**
 * JSON-RPC 2.0 over a Unix socket, one message per line. Our own rather than a JSON-RPC
 * library: what matters here is the transport discipline (an exact per-frame byte cap,
 * per-connection cancellation, bounded output for slow readers, event fan-out), and the
 * dispatch on top of it is small.
 */

export interface RpcLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RpcConnection {
  readonly id: number;
  subscribed: boolean;
  notify(method: string, params: unknown): void;
}

export interface CallContext {
  /** Aborted when the client disconnects or the daemon stops. */
  readonly signal: AbortSignal;
  readonly connection: RpcConnection;
  /** Runs right after the response is written, in the same tick (for replay-then-subscribe). */
  afterResponse(fn: () => void): void;
}

export interface MethodEntry {
  readonly paramsSchema: object;
  /** A synchronous handler's response is written in the same tick as the call. */
  readonly handle: (params: unknown, ctx: CallContext) => unknown;
}

export interface RpcServerOptions {
  readonly methods: Readonly<Record<string, MethodEntry>>;
  readonly maxFrameBytes: number;
  readonly maxBacklogBytes: number;
  readonly logger: RpcLogger;
}

type Id = string | number | null;
interface ErrorBody {
  code: number;
  message: string;
  data: { code: ErrorCode } & Record<string, unknown>;
}
type Response = { jsonrpc: '2.0'; id: Id; result: unknown } | { jsonrpc: '2.0'; id: Id; error: ErrorBody };

function errorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { code: ERROR_CATALOG[code].rpcCode, message, data: { ...details, code } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return isRecord(value) && typeof value.then === 'function';
}

function describeAjvErrors(errors: ErrorObject[] | null | undefined): { path: string; message: string }[] {
  return (errors ?? []).map((error) => {
    const extra =
      error.keyword === 'additionalProperties'
        ? `: ${String((error.params as { additionalProperty?: unknown }).additionalProperty)}`
        : error.keyword === 'enum' || error.keyword === 'const'
          ? ` (${JSON.stringify(error.params)})`
          : '';
    return { path: error.instancePath === '' ? '/' : error.instancePath, message: `${error.message ?? 'invalid'}${extra}` };
  });
}

const decoder = new TextDecoder('utf-8', { fatal: true });

class Connection implements RpcConnection {
  subscribed = false;
  readonly inflight = new Set<AbortController>();
  readonly pending = new Set<Promise<unknown>>();
  private readonly splitter: LineSplitter;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly server: RpcServer,
    private readonly options: RpcServerOptions,
  ) {
    this.splitter = new LineSplitter(
      options.maxFrameBytes,
      (frame) => this.onFrame(frame),
      (bytes) => this.onOverflow(bytes),
    );
    socket.on('data', (chunk: Buffer) => this.splitter.push(chunk));
    socket.on('error', (error) => options.logger.debug({ client: id, err: error.message }, 'client socket error'));
    socket.on('close', () => this.onClose());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  notify(method: string, params: unknown): void {
    this.write({ jsonrpc: '2.0', method, params });
  }

  write(message: unknown): void {
    if (this.closed || this.socket.destroyed) return;
    this.socket.write(`${JSON.stringify(message)}\n`);
    if (this.socket.writableLength > this.options.maxBacklogBytes) {
      this.options.logger.warn(
        { client: this.id, code: 'SLOW_CONSUMER', backlog: this.socket.writableLength },
        'dropping a client that stopped reading',
      );
      this.drop();
    }
  }

  /** Ends the connection after what was written is flushed; destroys it if that takes too long. */
  end(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      const timer = setTimeout(() => this.socket.destroy(), graceMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.end();
    });
  }

  drop(): void {
    this.socket.destroy();
    this.onClose();
  }

  private onOverflow(bytes: number): void {
    this.options.logger.warn({ client: this.id, code: 'FRAME_TOO_LARGE', bytes }, 'frame over the limit; closing that connection');
    this.socket.pause();
    this.write({
      jsonrpc: '2.0',
      id: null,
      error: errorBody('FRAME_TOO_LARGE', `frame exceeds ${this.options.maxFrameBytes} bytes; closing this connection`, {
        max: this.options.maxFrameBytes,
      }),
    });
    this.abortAll();
    void this.end(1000);
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.abortAll();
    this.server.forget(this);
  }

  abortAll(): void {
    for (const controller of this.inflight) controller.abort(new WispError('CANCELLED', 'the client disconnected'));
  }

  private onFrame(frame: Buffer): void {
    let text: string;
    try {
      text = decoder.decode(frame);
    } catch {
      this.write({ jsonrpc: '2.0', id: null, error: errorBody('PARSE_ERROR', 'frame is not valid UTF-8') });
      return;
    }
    if (text.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.write({
        jsonrpc: '2.0',
        id: null,
        error: errorBody('PARSE_ERROR', `invalid JSON: ${error instanceof Error ? error.message : String(error)}`),
      });
      return;
    }
    if (Array.isArray(message)) {
      if (message.length === 0) {
        this.write({ jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'empty batch') });
        return;
      }
      const after: (() => void)[] = [];
      let outcomes: ReturnType<RpcServer['dispatch']>[];
      try {
        outcomes = message.map((item) => this.server.dispatch(this, item, after));
      } catch (error) {
        this.options.logger.warn({ client: this.id, err: String(error) }, 'a batch could not be dispatched');
        this.write({ jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'the batch could not be processed (too large or too deeply nested?)') });
        return;
      }
      const finish = (responses: (Response | undefined)[]): void => {
        const present = responses.filter((r): r is Response => r !== undefined);
        if (present.length > 0) this.write(present);
        for (const fn of after) fn();
      };
      if (outcomes.some(isThenable)) this.track(Promise.all(outcomes.map((o) => Promise.resolve(o))).then(finish));
      else finish(outcomes as (Response | undefined)[]);
      return;
    }
    const after: (() => void)[] = [];
    let outcome: ReturnType<RpcServer['dispatch']>;
    try {
      outcome = this.server.dispatch(this, message, after);
    } catch (error) {
      // Hostile input (say, nesting deep enough to exhaust the stack in validation) must
      // cost that request, never the daemon.
      this.options.logger.warn({ client: this.id, err: String(error) }, 'a request could not be dispatched');
      this.write({ jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'the request could not be processed (too large or too deeply nested?)') });
      return;
    }
    const finish = (response: Response | undefined): void => {
      if (response !== undefined) this.write(response);
      for (const fn of after) fn();
    };
    if (isThenable(outcome)) this.track(Promise.resolve(outcome).then(finish));
    else finish(outcome);
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) => {
      this.options.logger.error({ client: this.id, err: String(error) }, 'unexpected failure writing a response');
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}

export class RpcServer {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly connections = new Set<Connection>();
  private readonly netServer: net.Server;
  private nextId = 1;
  private stopping = false;

  constructor(private readonly options: RpcServerOptions) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    for (const [name, entry] of Object.entries(options.methods)) this.validators.set(name, ajv.compile(entry.paramsSchema));
    this.netServer = net.createServer((socket) => this.accept(socket));
  }

  get clientCount(): number {
    return this.connections.size;
  }

  get subscriberCount(): number {
    let count = 0;
    for (const connection of this.connections) if (connection.subscribed) count += 1;
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

  /** Sends a notification to every subscribed connection. */
  broadcast(method: string, params: unknown): void {
    for (const connection of this.connections) if (connection.subscribed) connection.notify(method, params);
  }

  /** Stop accepting; refuse new requests; cancel in-flight work and wait (bounded) for it to settle. */
  async stopAccepting(settleMs: number): Promise<void> {
    this.stopping = true;
    this.netServer.close();
    const pending: Promise<unknown>[] = [];
    for (const connection of this.connections) {
      connection.abortAll();
      pending.push(...connection.pending);
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
    this.connections.delete(connection);
  }

  private accept(socket: net.Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const connection = new Connection(this.nextId++, socket, this, this.options);
    this.connections.add(connection);
  }

  /** Returns the response synchronously when the handler is synchronous. */
  dispatch(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    if (!isRecord(message)) {
      return { jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'a request must be a JSON object') };
    }
    const hasId = Object.hasOwn(message, 'id');
    const rawId = message.id;
    const idValid = rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
    const id: Id = hasId && idValid ? rawId : null;
    const fail = (code: ErrorCode, text: string, details?: Record<string, unknown>): Response => ({
      jsonrpc: '2.0',
      id,
      error: errorBody(code, text, details),
    });
    if (hasId && !idValid) return fail('INVALID_REQUEST', 'id must be a string, a number or null');
    if (message.jsonrpc !== '2.0') return fail('INVALID_REQUEST', 'jsonrpc must be "2.0"');
    if (typeof message.method !== 'string') return fail('INVALID_REQUEST', 'method must be a string');
    const params = message.params;
    if (params !== undefined && (typeof params !== 'object' || params === null)) {
      return fail('INVALID_REQUEST', 'params must be an object or an array');
    }
    const isNotification = !hasId;
    const method = message.method;
    const entry = Object.hasOwn(this.options.methods, method) ? this.options.methods[method] : undefined;
    const validate = this.validators.get(method);
    if (entry === undefined || validate === undefined) {
      return isNotification ? undefined : fail('METHOD_NOT_FOUND', `no method named ${JSON.stringify(method)}`);
    }
    if (Array.isArray(params)) {
      return isNotification ? undefined : fail('INVALID_PARAMS', 'params must be an object (by-name)');
    }
    const byName = params ?? {};
    if (!validate(byName)) {
      const errors = describeAjvErrors(validate.errors);
      const summary = errors.map((e) => `${e.path} ${e.message}`).join('; ');
      return isNotification ? undefined : fail('INVALID_PARAMS', `invalid params for ${method}: ${summary}`, { errors });
    }
    if (this.stopping) return isNotification ? undefined : fail('DAEMON_STOPPING', 'the daemon is shutting down');

    const controller = new AbortController();
    connection.inflight.add(controller);
    const ctx: CallContext = { signal: controller.signal, connection, afterResponse: (fn) => after.push(fn) };
    const settle = (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): Response | undefined => {
      connection.inflight.delete(controller);
      if (isNotification) return undefined;
      if (outcome.ok) return { jsonrpc: '2.0', id, result: outcome.value };
      after.length = 0;
      return { jsonrpc: '2.0', id, error: this.toErrorBody(outcome.error, method) };
    };
    let out: unknown;
    try {
      out = entry.handle(byName, ctx);
    } catch (error) {
      return settle({ ok: false, error });
    }
    if (!isThenable(out)) return settle({ ok: true, value: out });
    return Promise.resolve(out).then(
      (value) => settle({ ok: true, value }),
      (error: unknown) => settle({ ok: false, error }),
    );
  }

  private toErrorBody(error: unknown, method: string): ErrorBody {
    if (error instanceof WispError) return errorBody(error.code, error.message, error.details);
    this.options.logger.error({ method, err: error instanceof Error ? error.stack : String(error) }, 'method failed unexpectedly');
    return { code: JSONRPC_INTERNAL_ERROR, message: 'internal error (see the daemon log)', data: { code: 'INTERNAL_ERROR' } };
  }
}
