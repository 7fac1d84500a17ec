import net from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LineSplitter, nestsDeeperThan, textNestsDeeperThan } from '../util/index.js';
import { ERROR_CATALOG, JSONRPC_INTERNAL_ERROR, WispError, type ErrorCode } from '../core/index.js';
import { LIMITS } from '../core/index.js';

/**
 * JSON-RPC 2.0 over a Unix socket, one message per line. Our own rather than a JSON-RPC
 * library: what matters here is the transport discipline (an exact per-frame byte cap,
 * per-connection cancellation, bounded output for slow readers, event fan-out), and the
 * dispatch on top of it is small.
 *
 * Nothing a client sends can throw out of here or stall the loop for long: a batch holds at
 * most maxBatchRequests, calls that wait on a human are capped per client and in total, params
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
  /** The result never changes while the server runs: it is serialised once, then reused. */
  readonly staticResult?: boolean;
  /**
   * The call may wait long (on a human): counted against maxPendingCallsPerClient and
   * maxPendingCalls, and refused with LIMIT_EXCEEDED past them. Other methods are never
   * refused for load, so a full daemon can still be asked, answered and stopped.
   */
  readonly waits?: boolean;
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
  readonly maxPendingCallsPerClient?: number;
  readonly maxPendingCalls?: number;
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

/** `spent`: about how many bytes of work a refusal cost (at most the limit it was given). */
type Encoded = { ok: true; text: string; bytes: number } | { ok: false; reason: string; spent: number };

class OverLimit extends Error {}

/** A result serialised once and reused (a method whose result never changes: see MethodEntry.staticResult). */
class PreSerialized {
  constructor(
    readonly text: string,
    readonly bytes: number,
  ) {}
}

/**
 * JSON.stringify under a guard: a value that throws (a cycle, a BigInt, a string too long
 * for V8, nesting too deep) or whose text is over `maxBytes` is refused, never thrown. A
 * lower bound of the text's length is kept as it is built, and serialising stops once it
 * passes `maxBytes`: refusing a value of any size costs about `maxBytes` of work.
 */
function encode(message: unknown, maxBytes: number): Encoded {
  let atLeast = -3; // the root is visited under the key "" of a wrapper object
  let visited = 0; // what was serialised before stopping: the work spent
  let text: string | undefined;
  try {
    text = JSON.stringify(message, function (this: unknown, key: string, value: unknown): unknown {
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return value;
      visited = atLeast;
      atLeast += (typeof value === 'string' ? value.length + 2 : 1) + (Array.isArray(this) ? 0 : key.length + 3);
      if (atLeast > maxBytes) throw new OverLimit();
      return value;
    });
  } catch (error) {
    if (error instanceof OverLimit) return { ok: false, reason: `it is over the ${maxBytes}-byte frame limit`, spent: Math.max(0, visited) };
    return { ok: false, reason: `it could not be serialised (${error instanceof Error ? error.message : String(error)})`, spent: Math.max(0, atLeast) };
  }
  if (typeof text !== 'string') return { ok: false, reason: 'it could not be serialised', spent: 0 };
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) return { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit`, spent: bytes };
  return { ok: true, text, bytes };
}

/** Cuts a client-supplied string for an error message. */
function excerpt(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

/** A notification around params already serialised, checked against the cap (the parts are measured flat: cheaper). */
function frameOf(head: string, params: string, maxBytes: number): Encoded {
  const bytes = Buffer.byteLength(head) + Buffer.byteLength(params) + 1;
  if (bytes > maxBytes) return { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit`, spent: 0 };
  return { ok: true, text: `${head}${params}}`, bytes };
}

class Connection implements RpcConnection {
  subscribed = false;
  readonly inflight = new Set<AbortController>();
  readonly pending = new Set<Promise<unknown>>();
  /** Requests of methods that wait (MethodEntry.waits) not yet answered. */
  pendingCalls = 0;
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
    const max = this.options.maxFrameBytes - 1;
    if (!Array.isArray(response)) {
      const encoded = this.encodeResponse(response, max);
      this.writeLine(`${encoded.ok ? encoded.text : this.tooLarge(response.id, `the answer could not be sent: ${encoded.reason}`).text}\n`);
      return;
    }
    // A batch is one frame. Its answers take the frame in order; one that does not fit in
    // what is left becomes REPLY_TOO_LARGE (room is kept for those). The serialising work
    // for the whole batch is bounded too, so a batch of huge answers costs little.
    let room = max - 2 - response.length * 512;
    let work = 2 * this.options.maxFrameBytes;
    let refused = 0;
    const parts = response.map((answer) => {
      const limit = Math.min(room, work);
      const encoded: Encoded = limit > 0 ? this.encodeResponse(answer, limit) : { ok: false, reason: 'no room left', spent: 0 };
      work -= encoded.ok ? encoded.bytes : encoded.spent;
      if (encoded.ok) {
        room -= encoded.bytes + 1;
        return encoded.text;
      }
      refused += 1;
      return this.tooLarge(answer.id, `the batch's answers together are over the ${this.options.maxFrameBytes}-byte frame limit`, false).text;
    });
    if (refused > 0) {
      this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', answers: response.length, refused }, 'a batch answer was over the frame limit: the answers that did not fit became REPLY_TOO_LARGE');
    }
    this.writeLine(`[${parts.join(',')}]\n`);
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

  /** The response's text, unless it cannot be serialised or is over `max` bytes. */
  private encodeResponse(response: Response, max: number): Encoded {
    if ('result' in response && response.result instanceof PreSerialized) {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":`;
      const bytes = Buffer.byteLength(head) + response.result.bytes + 1;
      if (bytes > max) return { ok: false, reason: `it is ${bytes} bytes, over the ${max}-byte frame limit`, spent: 0 };
      return { ok: true, text: `${head}${response.result.text}}`, bytes };
    }
    return encode(response, max);
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
    if (textNestsDeeperThan(frame, LIMITS.maxFrameNesting)) {
      this.respond({
        jsonrpc: '2.0',
        id: null,
        error: errorBody('INVALID_REQUEST', `the frame nests deeper than ${LIMITS.maxFrameNesting} levels; it was not parsed`, {
          limit: 'maxFrameNesting',
          max: LIMITS.maxFrameNesting,
        }),
      });
      return;
    }
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
  private pendingCalls = 0;
  private readonly staticResults = new Map<string, PreSerialized>();

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
          : frameOf(`{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":`, serialized, this.options.maxFrameBytes - 1);
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
    const perClient = this.options.maxPendingCallsPerClient ?? LIMITS.maxPendingCallsPerClient;
    const total = this.options.maxPendingCalls ?? LIMITS.maxPendingCalls;
    const waits = entry.waits === true;
    if (waits && (connection.pendingCalls >= perClient || this.pendingCalls >= total)) {
      const mine = connection.pendingCalls >= perClient;
      return isNotification
        ? undefined
        : fail(
            'LIMIT_EXCEEDED',
            mine
              ? `this client already has ${perClient} calls waiting for an answer; wait for some to finish`
              : `the daemon already has ${total} calls waiting for an answer; try again later`,
            mine ? { limit: 'maxPendingCallsPerClient', max: perClient } : { limit: 'maxPendingCalls', max: total },
          );
    }

    const controller = new AbortController();
    connection.inflight.add(controller);
    if (waits) {
      connection.pendingCalls += 1;
      this.pendingCalls += 1;
    }
    const ctx: CallContext = { signal: controller.signal, connection, afterResponse: (fn) => after.push(fn) };
    const settle = (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): Response | undefined => {
      connection.inflight.delete(controller);
      if (waits) {
        connection.pendingCalls -= 1;
        this.pendingCalls -= 1;
      }
      if (isNotification) return undefined;
      if (outcome.ok) return { jsonrpc: '2.0', id, result: entry.staticResult === true ? this.preSerialized(method, outcome.value) : outcome.value };
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
