import net from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LineSplitter, nestsDeeperThan } from '../util/index.js';
import { ERROR_CATALOG, JSONRPC_INTERNAL_ERROR, WispError, type ErrorCode } from './errors.js';
import { LIMITS } from './limits.js';

/**
 * JSON-RPC 2.0 over a Unix socket, one message per line. Our own rather than a JSON-RPC
 * library: what matters here is the transport discipline (an exact per-frame byte cap,
 * per-connection cancellation, bounded output for slow readers, event fan-out), and the
 * dispatch on top of it is small.
 *
 * Nothing a client sends can throw out of here or stall the loop for long: a batch holds at
 * most maxBatchRequests, unanswered requests are capped per client and in total, params
 * nesting deeper than maxArgumentDepth are refused before anything looks into them, and
 * every frame we send is serialised under a guard (what cannot be serialised, or would be
 * larger than the frame cap, becomes REPLY_TOO_LARGE for that request; an event that cannot
 * be sent is dropped with a log line).
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
  /** The code for a param nesting deeper than maxArgumentDepth (default INVALID_PARAMS). */
  readonly tooDeep?: ErrorCode;
  /** A synchronous handler's response is written in the same tick as the call. */
  readonly handle: (params: unknown, ctx: CallContext) => unknown;
}

export interface RpcServerOptions {
  readonly methods: Readonly<Record<string, MethodEntry>>;
  readonly maxFrameBytes: number;
  readonly maxBacklogBytes: number;
  readonly logger: RpcLogger;
  /** Defaults: the LIMITS of the same names. */
  readonly maxBatchRequests?: number;
  readonly maxPendingRequestsPerClient?: number;
  readonly maxPendingRequests?: number;
  readonly maxArgumentDepth?: number;
}

/** Longest id we echo back (a longer one is INVALID_REQUEST): an error reply must always fit a frame. */
const MAX_ID_CHARS = 256;
/** Schema failures listed in an INVALID_PARAMS reply. */
const MAX_REPORTED_ERRORS = 16;

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
  return (errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((error) => {
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

type Encoded = { ok: true; text: string; bytes: number } | { ok: false; reason: string };

/**
 * JSON.stringify under a guard: a value that throws (a cycle, a BigInt, a string too long
 * for V8, nesting too deep) or whose text is over `maxBytes` is refused, never thrown.
 */
function encode(message: unknown, maxBytes: number): Encoded {
  let text: string | undefined;
  try {
    text = JSON.stringify(message);
  } catch (error) {
    return { ok: false, reason: `it could not be serialised (${error instanceof Error ? error.message : String(error)})` };
  }
  if (typeof text !== 'string') return { ok: false, reason: 'it could not be serialised' };
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) return { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit` };
  return { ok: true, text, bytes };
}

/** Cuts a client-supplied string for an error message. */
function excerpt(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

/** A frame already serialised, checked against the cap. */
function frameOf(text: string, maxBytes: number): Encoded {
  const bytes = Buffer.byteLength(text);
  return bytes <= maxBytes ? { ok: true, text, bytes } : { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit` };
}

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

  /** A notification that cannot be sent (unserialisable, over the frame cap) is dropped with a log line. */
  notify(method: string, params: unknown): void {
    if (this.isGone) return;
    const encoded = encode({ jsonrpc: '2.0', method, params }, this.options.maxFrameBytes - 1);
    if (!encoded.ok) {
      this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', method }, `a notification was not sent: ${encoded.reason}`);
      return;
    }
    this.writeLine(`${encoded.text}\n`);
  }

  /** A response (or a batch of them), each serialised under the guard: see encodeResponse. */
  respond(response: Response | Response[]): void {
    if (this.isGone) return;
    if (!Array.isArray(response)) {
      this.writeLine(`${this.encodeResponse(response, this.options.maxFrameBytes - 1).text}\n`);
      return;
    }
    // A batch is one frame: while it is over the cap, its largest answer becomes REPLY_TOO_LARGE.
    const max = this.options.maxFrameBytes - 1;
    const parts = response.map((r) => this.encodeResponse(r, max));
    let total = parts.reduce((sum, part) => sum + part.bytes + 1, 1);
    let replaced = 0;
    while (total > max) {
      let largest = 0;
      parts.forEach((part, i) => {
        if (part.bytes > (parts[largest]?.bytes ?? 0)) largest = i;
      });
      const before = parts[largest];
      const answer = response[largest];
      if (before === undefined || answer === undefined) break;
      const after = this.tooLarge(answer.id, `the batch's answers together are over the ${this.options.maxFrameBytes}-byte frame limit`, false);
      if (after.bytes >= before.bytes) break;
      parts[largest] = after;
      total -= before.bytes - after.bytes;
      replaced += 1;
    }
    if (replaced > 0) {
      this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', answers: response.length, replaced }, 'a batch answer was over the frame limit: its largest answers became REPLY_TOO_LARGE');
    }
    this.writeLine(`[${parts.map((part) => part.text).join(',')}]\n`);
  }

  /** Writes one serialised frame. Never throws: a socket that refuses it is dropped. */
  writeLine(line: string): void {
    if (this.isGone) return;
    try {
      this.socket.write(line);
    } catch (error) {
      this.options.logger.warn({ client: this.id, err: String(error) }, 'a write to a client failed; dropping it');
      this.drop();
      return;
    }
    if (this.socket.writableLength > this.options.maxBacklogBytes) {
      this.options.logger.warn(
        { client: this.id, code: 'SLOW_CONSUMER', backlog: this.socket.writableLength },
        'dropping a client that stopped reading',
      );
      this.drop();
    }
  }

  private get isGone(): boolean {
    return this.closed || this.socket.destroyed;
  }

  /** The response's text; if it cannot be serialised or is over `max` bytes, a REPLY_TOO_LARGE error for its id instead. */
  private encodeResponse(response: Response, max: number): { text: string; bytes: number } {
    const encoded = encode(response, max);
    if (encoded.ok) return encoded;
    return this.tooLarge(response.id, `the answer could not be sent: ${encoded.reason}`);
  }

  private tooLarge(id: Id, message: string, log = true): { text: string; bytes: number } {
    if (log) this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', id }, message);
    const text = JSON.stringify({ jsonrpc: '2.0', id, error: errorBody('REPLY_TOO_LARGE', message, { max: this.options.maxFrameBytes }) });
    return { text, bytes: Buffer.byteLength(text) };
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
    this.respond({
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

  /** Called from the socket's data event: whatever goes wrong costs this frame, never the daemon. */
  private onFrame(frame: Buffer): void {
    if (this.isGone) return;
    try {
      this.handleFrame(frame);
    } catch (error) {
      this.options.logger.error({ client: this.id, err: error instanceof Error ? error.stack : String(error) }, 'a frame could not be handled');
      this.respond({ jsonrpc: '2.0', id: null, error: internalError() });
    }
  }

  private handleFrame(frame: Buffer): void {
    let text: string;
    try {
      text = decoder.decode(frame);
    } catch {
      this.respond({ jsonrpc: '2.0', id: null, error: errorBody('PARSE_ERROR', 'frame is not valid UTF-8') });
      return;
    }
    if (text.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.respond({
        jsonrpc: '2.0',
        id: null,
        error: errorBody('PARSE_ERROR', `invalid JSON: ${excerpt(error instanceof Error ? error.message : String(error), 200)}`),
      });
      return;
    }
    if (Array.isArray(message)) {
      if (message.length === 0) {
        this.respond({ jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'empty batch') });
        return;
      }
      const maxBatch = this.options.maxBatchRequests ?? LIMITS.maxBatchRequests;
      if (message.length > maxBatch) {
        // Refused whole, before any of it runs.
        this.respond({
          jsonrpc: '2.0',
          id: null,
          error: errorBody('LIMIT_EXCEEDED', `a batch holds at most ${maxBatch} requests (this one has ${message.length}); nothing in it was run`, {
            limit: 'maxBatchRequests',
            max: maxBatch,
          }),
        });
        return;
      }
      const after: (() => void)[] = [];
      const outcomes = message.map((item) => this.server.dispatch(this, item, after));
      const finish = (responses: (Response | undefined)[]): void => {
        const present = responses.filter((r): r is Response => r !== undefined);
        if (present.length > 0) this.respond(present);
        this.runAfter(after);
      };
      if (outcomes.some(isThenable)) this.track(Promise.all(outcomes.map((o) => Promise.resolve(o))).then(finish));
      else finish(outcomes as (Response | undefined)[]);
      return;
    }
    const after: (() => void)[] = [];
    const outcome = this.server.dispatch(this, message, after);
    const finish = (response: Response | undefined): void => {
      if (response !== undefined) this.respond(response);
      this.runAfter(after);
    };
    if (isThenable(outcome)) this.track(Promise.resolve(outcome).then(finish));
    else finish(outcome);
  }

  private runAfter(after: (() => void)[]): void {
    for (const fn of after) {
      try {
        fn();
      } catch (error) {
        this.options.logger.error({ client: this.id, err: error instanceof Error ? error.stack : String(error) }, 'a step after a response failed');
      }
    }
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) => {
      this.options.logger.error({ client: this.id, err: String(error) }, 'unexpected failure writing a response');
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}

function internalError(): ErrorBody {
  return { code: JSONRPC_INTERNAL_ERROR, message: 'internal error (see the daemon log)', data: { code: 'INTERNAL_ERROR' } };
}

export class RpcServer {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly connections = new Set<Connection>();
  private readonly netServer: net.Server;
  private nextId = 1;
  private stopping = false;
  /** Requests run and not yet answered, across every connection. */
  private unanswered = 0;

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

  /**
   * Sends a notification to every subscribed connection, serialised once. `serialized` is
   * params already serialised by the caller (the event hub does it once per event), or null
   * when the caller found it cannot be sent: then it is dropped with a log line.
   */
  broadcast(method: string, params: unknown, serialized?: string | null): void {
    let line: string | undefined;
    let reason = 'it could not be serialised';
    if (serialized !== null) {
      const encoded =
        serialized === undefined
          ? encode({ jsonrpc: '2.0', method, params }, this.options.maxFrameBytes - 1)
          : frameOf(`{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${serialized}}`, this.options.maxFrameBytes - 1);
      if (encoded.ok) line = `${encoded.text}\n`;
      else reason = encoded.reason;
    }
    if (line === undefined) {
      const about = isRecord(params) ? { seq: params.seq, type: params.type } : {};
      this.options.logger.warn({ code: 'REPLY_TOO_LARGE', method, ...about }, `a notification was not sent to subscribers: ${reason}`);
      return;
    }
    for (const connection of this.connections) if (connection.subscribed) connection.writeLine(line);
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

  /**
   * Returns the response synchronously when the handler is synchronous. Never throws: a
   * failure of ours becomes INTERNAL_ERROR for that request.
   */
  dispatch(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    try {
      return this.dispatchUnguarded(connection, message, after);
    } catch (error) {
      this.options.logger.error({ client: connection.id, err: error instanceof Error ? error.stack : String(error) }, 'a request could not be dispatched');
      const id = isRecord(message) && (typeof message.id === 'number' || (typeof message.id === 'string' && message.id.length <= MAX_ID_CHARS)) ? message.id : null;
      return isRecord(message) && !Object.hasOwn(message, 'id') ? undefined : { jsonrpc: '2.0', id, error: internalError() };
    }
  }

  private dispatchUnguarded(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined> {
    if (!isRecord(message)) {
      return { jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'a request must be a JSON object') };
    }
    const hasId = Object.hasOwn(message, 'id');
    const rawId = message.id;
    const idValid =
      rawId === null || (typeof rawId === 'string' && rawId.length <= MAX_ID_CHARS) || (typeof rawId === 'number' && Number.isFinite(rawId));
    const id: Id = hasId && idValid ? rawId : null;
    const fail = (code: ErrorCode, text: string, details?: Record<string, unknown>): Response => ({
      jsonrpc: '2.0',
      id,
      error: errorBody(code, text, details),
    });
    if (hasId && !idValid) return fail('INVALID_REQUEST', `id must be a string (at most ${MAX_ID_CHARS} characters), a number or null`);
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
      return isNotification ? undefined : fail('METHOD_NOT_FOUND', `no method named ${JSON.stringify(excerpt(method))}`);
    }
    if (Array.isArray(params)) {
      return isNotification ? undefined : fail('INVALID_PARAMS', 'params must be an object (by-name)');
    }
    const byName = params ?? {};
    // Before anything looks into the params (schema checks, handlers, redaction, digests):
    // nothing downstream recurses deeper than this.
    const maxDepth = this.options.maxArgumentDepth ?? LIMITS.maxArgumentDepth;
    for (const [name, value] of Object.entries(byName)) {
      if (nestsDeeperThan(value, maxDepth)) {
        return isNotification
          ? undefined
          : fail(entry.tooDeep ?? 'INVALID_PARAMS', `${JSON.stringify(excerpt(name))} nests deeper than ${maxDepth} levels`, {
              limit: 'maxArgumentDepth',
              max: maxDepth,
              path: `/${excerpt(name)}`,
            });
      }
    }
    if (!validate(byName)) {
      const errors = describeAjvErrors(validate.errors);
      const summary = errors.map((e) => `${e.path} ${e.message}`).join('; ');
      return isNotification ? undefined : fail('INVALID_PARAMS', `invalid params for ${method}: ${summary}`, { errors });
    }
    if (this.stopping) return isNotification ? undefined : fail('DAEMON_STOPPING', 'the daemon is shutting down');
    const perClient = this.options.maxPendingRequestsPerClient ?? LIMITS.maxPendingRequestsPerClient;
    const total = this.options.maxPendingRequests ?? LIMITS.maxPendingRequests;
    if (connection.inflight.size >= perClient || this.unanswered >= total) {
      const mine = connection.inflight.size >= perClient;
      return isNotification
        ? undefined
        : fail(
            'LIMIT_EXCEEDED',
            mine
              ? `this client already has ${perClient} requests waiting for an answer; wait for some to finish`
              : `the daemon already has ${total} requests waiting for an answer; try again later`,
            mine ? { limit: 'maxPendingRequestsPerClient', max: perClient } : { limit: 'maxPendingRequests', max: total },
          );
    }

    const controller = new AbortController();
    connection.inflight.add(controller);
    this.unanswered += 1;
    const ctx: CallContext = { signal: controller.signal, connection, afterResponse: (fn) => after.push(fn) };
    const settle = (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): Response | undefined => {
      connection.inflight.delete(controller);
      this.unanswered -= 1;
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
    return internalError();
  }
}
