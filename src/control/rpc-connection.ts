import type net from 'node:net';
import { LIMITS, WispError } from '../core/index.js';
import { LineSplitter, textNestsDeeperThan, type FrameBudget, type OverflowReason } from '../util/index.js';
import type { Refusal } from './admission.js';
import { BoundedResult, DeferredResult, encode, encodeResponse, errorBody, excerpt, frameOf, internalError, isThenable, PreSerialized, type Encoded, type ErrorBody, type Id, type Response } from './rpc-frame.js';
import type { EmittedEvent } from './event-hub.js';
import type { FrameRedactor, RpcConnection, RpcServerOptions } from './rpc-types.js';

/** What a connection needs from its server. */
export interface ConnectionHost {
  /** The response to one request (synchronous when the handler is); never throws. */
  dispatch(connection: Connection, message: unknown, after: (() => void)[]): Response | undefined | Promise<Response | undefined>;
  forget(connection: Connection): void;
  /** The bytes of unfinished frames every connection may hold together. */
  readonly frameBudget: FrameBudget;
  /** Why a frame was refused for the budget (the client's error). */
  heldFrameRefusal(): Refusal;
  /** Counts `connection` as one of gateway `id`'s: null, or why it may not be. */
  joinGateway(connection: Connection, id: string): Refusal | null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** An answer whose result is serialised when the turn's frames are written (MethodTraits.deferredResult). */
class DeferredAnswer {
  constructor(readonly response: Response) {}
}

/** A request that runs on (an asynchronous handler): what the connection can do to it. */
export interface Abortable {
  /** Its id: null for a notification (no client can cancel one). */
  readonly id: string | number | null;
  abort(reason: unknown): void;
}

/**
 * One client: its frames (split at newlines under the byte cap), batches, the answers it
 * is owed, and its in-flight calls, aborted when it goes away. Every frame it writes is
 * serialised under the guard, and a client that stops reading is dropped.
 */
export class Connection implements RpcConnection {
  subscribed = false;
  eventTypes: ReadonlySet<string> | null = null;
  /**
   * Its requests that run on, not answered yet: aborted when it goes away, and found by id
   * for rpc.cancel. One set for both (a map by id beside it cost every call a second insert
   * and delete, and a delete that empties a map allocates its table anew).
   */
  readonly running = new Set<Abortable>();
  /** Responses still owed (handlers running on): stopAccepting waits for them, bounded. */
  private owed = 0;
  private onAnswered: (() => void)[] = [];
  /** Requests of methods that wait (MethodEntry.waits) not yet answered. */
  pendingCalls = 0;
  clientName: string | null = null;
  /** The gateway it joined (client.identify): its waiting calls and its place count as that gateway's. Never changes once set. */
  gateway: string | null = null;
  private readonly splitter: LineSplitter;
  private closed = false;
  private readonly closers: (() => void)[] = []; // whenClosed
  /** Frames written this turn, not yet handed to the socket (see writeLine); events are serialised as they leave. */
  private outbox: (string | EmittedEvent | DeferredAnswer)[] = [];
  private outboxChars = 0;
  /** Why every request was aborted, once abortAll ran. */
  private abortedAll: WispError | undefined;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly server: ConnectionHost,
    private readonly options: RpcServerOptions,
  ) {
    this.splitter = new LineSplitter(
      options.maxFrameBytes,
      (frame) => this.onFrame(frame),
      (bytes, reason) => this.onOverflow(bytes, reason),
      server.frameBudget,
    );
    socket.on('data', (chunk: Buffer) => this.splitter.push(chunk));
    socket.on('error', (error) => options.logger.debug({ client: id, err: error.message }, 'client socket error'));
    socket.on('close', () => this.onClose());
    // Accepted paused (RpcServer: a refused connection is never read): reading starts now.
    socket.resume();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  whenClosed(fn: () => void): void {
    if (this.closed) fn();
    else this.closers.push(fn);
  }

  /** A notification that cannot be sent (unserialisable, over the frame cap) is dropped with a log line. */
  notify(method: string, params: unknown): void {
    if (this.isGone) return;
    const max = this.options.maxFrameBytes - 1;
    let encoded = encode({ jsonrpc: '2.0', method, params }, max);
    if (this.mayHoldSecret(encoded)) encoded = encode({ jsonrpc: '2.0', method, params: this.redactor?.redactValue(params) }, max);
    if (!encoded.ok) {
      this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', method }, `a notification was not sent: ${encoded.reason}`);
      return;
    }
    this.writeLine(`${encoded.text}\n`);
  }

  notifySerialized(method: string, params: string): void {
    if (this.isGone) return;
    // A held event was redacted when it was emitted; a value may have become known since.
    const redactor = this.options.redactor;
    if (redactor !== undefined && !redactor.clean(params)) {
      this.notify(method, redactor.redactValue(JSON.parse(params) as unknown));
      return;
    }
    const encoded = frameOf(`{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":`, params, this.options.maxFrameBytes - 1);
    if (!encoded.ok) {
      this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', method }, `a notification was not sent: ${encoded.reason}`);
      return;
    }
    this.writeLine(`${encoded.text}\n`);
  }

  /** A response (or a batch of them), each serialised under the guard: see encodeResponse. */
  respond(response: Response | Response[]): void {
    if (this.isGone) return;
    if (Array.isArray(response)) {
      this.respondBatch(response);
      return;
    }
    if ('result' in response && response.result instanceof DeferredResult) {
      this.outbox.push(new DeferredAnswer(response));
      if (this.outbox.length === 1) setImmediate(this.flush);
      return;
    }
    this.writeLine(this.answerLine(response));
  }

  /** An answer's frame, newline included: REPLY_TOO_LARGE in its place when it cannot be sent. */
  private answerLine(response: Response): string {
    const encoded = this.encodeAnswer(response, this.options.maxFrameBytes - 1);
    return `${encoded.ok ? encoded.text : this.tooLarge(response.id, `the answer could not be sent: ${encoded.reason}`).text}\n`;
  }

  /** A deferred answer's frame; never throws (this runs at the end of the turn, outside any request's guard). */
  private deferredLine(answer: DeferredAnswer): string {
    try {
      return this.answerLine(answer.response);
    } catch (error) {
      this.options.logger.error({ client: this.id, err: error instanceof Error ? error.stack : String(error) }, 'an answer could not be serialised');
      return `${JSON.stringify({ jsonrpc: '2.0', id: answer.response.id, error: internalError() })}\n`;
    }
  }

  /** Serialises the deferred answers waiting in the outbox now: before a secret value stops being redacted. */
  serializeDeferred(): void {
    for (let i = 0; i < this.outbox.length; i++) {
      const item = this.outbox[i];
      if (!(item instanceof DeferredAnswer)) continue;
      const line = this.deferredLine(item);
      this.outbox[i] = line;
      this.outboxChars += line.length;
    }
  }

  /**
   * Queues one serialised frame; the frames of one event-loop turn leave in one write (at
   * the turn's end, setImmediate): under load an approver's event, answer and the next
   * event cost one syscall, not three. Never throws: a socket that refuses it is dropped.
   */
  writeLine(line: string): void {
    if (this.isGone) return;
    this.outbox.push(line);
    this.outboxChars += line.length;
    if (this.outbox.length === 1) setImmediate(this.flush);
    if (this.socket.writableLength + this.outboxChars > this.options.maxBacklogBytes) {
      this.options.logger.warn(
        { client: this.id, code: 'SLOW_CONSUMER', backlog: this.socket.writableLength + this.outboxChars },
        'dropping a client that stopped reading',
      );
      this.drop();
    }
  }

  /** Queues an event for this subscriber, written with the turn's other frames and serialised then (see EmittedEvent). */
  sendEvent(emitted: EmittedEvent): void {
    if (this.isGone) return;
    this.outbox.push(emitted);
    if (this.outbox.length === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    if (this.outbox.length === 0) return;
    const outbox = this.outbox;
    this.outbox = [];
    this.outboxChars = 0;
    if (this.isGone) return;
    const text = outbox.length === 1 && typeof outbox[0] === 'string' ? outbox[0] : this.joined(outbox);
    if (this.socket.writableLength + text.length > this.options.maxBacklogBytes) {
      this.options.logger.warn({ client: this.id, code: 'SLOW_CONSUMER', backlog: this.socket.writableLength + text.length }, 'dropping a client that stopped reading');
      this.drop();
      return;
    }
    try {
      this.socket.write(text);
    } catch (error) {
      this.options.logger.warn({ client: this.id, err: String(error) }, 'a write to a client failed; dropping it');
      this.drop();
    }
  };

  /** The frames as one text; an event that cannot be sent (its hub logged it) or is over this connection's frame cap is left out. */
  private joined(outbox: readonly (string | EmittedEvent | DeferredAnswer)[]): string {
    const lines: string[] = [];
    for (const item of outbox) {
      if (typeof item === 'string') lines.push(item);
      else if (item instanceof DeferredAnswer) lines.push(this.deferredLine(item));
      else if (item.frameBytes <= this.options.maxFrameBytes && item.frame !== null) lines.push(item.frame);
    }
    return lines.join('');
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
      this.flush();
      this.socket.end();
    });
  }

  drop(): void {
    this.outbox = [];
    this.outboxChars = 0;
    this.socket.destroy();
    this.onClose();
  }

  /** Aborts every request in flight, and any made later, with CANCELLED and `why`. */
  abortAll(why = 'the client disconnected'): void {
    this.abortedAll ??= new WispError('CANCELLED', why);
    for (const request of this.running) request.abort(this.abortedAll);
  }

  /** Why every request of this client is aborted (it went away, the daemon is stopping); undefined while not. */
  get abortReason(): WispError | undefined {
    return this.abortedAll;
  }

  cancelRequest(id: string | number, reason: unknown): boolean {
    // The latest request of that id (a client that reuses an id cancels the one it sent last).
    let found: Abortable | undefined;
    for (const request of this.running) if (request.id === id) found = request;
    found?.abort(reason);
    return found !== undefined;
  }

  /** Resolves once no response is owed to this client. */
  answered(): Promise<void> {
    return this.owed === 0 ? Promise.resolve() : new Promise((resolve) => this.onAnswered.push(resolve));
  }

  private get isGone(): boolean {
    return this.closed || this.socket.destroyed;
  }

  /**
   * A batch is one frame. Its answers take the frame in order; one that does not fit in
   * what is left becomes REPLY_TOO_LARGE (room is kept for those). The serialising work
   * for the whole batch is bounded too, so a batch of huge answers costs little.
   */
  private respondBatch(response: Response[]): void {
    let room = this.options.maxFrameBytes - 1 - 2 - response.length * 512;
    let work = 2 * this.options.maxFrameBytes;
    let refused = 0;
    const parts = response.map((answer) => {
      const limit = Math.min(room, work);
      const encoded: Encoded = limit > 0 ? this.encodeAnswer(answer, limit) : { ok: false, reason: 'no room left', spent: 0, tooLarge: true };
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

  /**
   * An answer serialised (see encodeResponse); serialised again with its result or error
   * redacted when its text may hold a secret, or when it was refused for its size (redacted,
   * it may fit, and the refusal must not tell the unredacted size).
   */
  private encodeAnswer(response: Response, max: number): Encoded {
    // Unwrapped here, when it is serialised: at the end of the turn, or at once in a batch.
    if ('result' in response && response.result instanceof DeferredResult) return this.encodeAnswer({ jsonrpc: '2.0', id: response.id, result: response.result.value }, max);
    const encoded = encodeResponse(response, max);
    const redactor = this.redactor;
    if (redactor === undefined || !this.mayHoldSecret(encoded)) return encoded;
    if ('error' in response) return encodeResponse({ jsonrpc: '2.0', id: response.id, error: redactor.redactValue(response.error) }, max);
    // A pre-serialised result is a static one (rpc.discover): public text of ours, never a secret's; marking a
    // coincidence in it would only tell a client that a secret equals some of it.
    if (response.result instanceof PreSerialized) return encoded;
    const result = response.result instanceof BoundedResult ? new BoundedResult(redactor.redactValue(response.result.value)) : redactor.redactValue(response.result);
    return encodeResponse({ jsonrpc: '2.0', id: response.id, result }, max);
  }

  /** Whether a serialised frame must be redacted and serialised again: its text may hold a secret, or it was refused for its size while secrets are held. */
  private mayHoldSecret(encoded: Encoded): boolean {
    const redactor = this.redactor;
    if (redactor === undefined || redactor.size === 0) return false;
    return encoded.ok ? !redactor.clean(encoded.text) : encoded.tooLarge;
  }

  private get redactor(): FrameRedactor | undefined {
    return this.options.redactor;
  }

  private tooLarge(id: Id, message: string, log = true): { text: string; bytes: number } {
    if (log) this.options.logger.warn({ client: this.id, code: 'REPLY_TOO_LARGE', id }, message);
    // The reason may quote a serialiser's error message: checked like any answer.
    const shown = this.redactor?.redactValue(message) ?? message;
    const text = JSON.stringify({ jsonrpc: '2.0', id, error: errorBody('REPLY_TOO_LARGE', shown, { max: this.options.maxFrameBytes }) });
    return { text, bytes: Buffer.byteLength(text) };
  }

  private onOverflow(bytes: number, reason: OverflowReason): void {
    if (reason === 'budget') {
      const refusal = this.server.heldFrameRefusal();
      this.options.logger.warn({ client: this.id, code: 'LIMIT_EXCEEDED', limit: refusal.limit, bytes }, 'unfinished frames over the shared budget; closing that connection');
      this.fail(errorBody('LIMIT_EXCEEDED', refusal.message, { limit: refusal.limit, max: refusal.max }));
      return;
    }
    this.options.logger.warn({ client: this.id, code: 'FRAME_TOO_LARGE', bytes }, 'frame over the limit; closing that connection');
    this.fail(errorBody('FRAME_TOO_LARGE', `frame exceeds ${this.options.maxFrameBytes} bytes; closing this connection`, { max: this.options.maxFrameBytes }));
  }

  /** Answers once with `error` (id null), takes nothing more from this client, aborts its calls and closes. */
  private fail(error: ErrorBody): void {
    this.socket.pause();
    this.splitter.dispose();
    this.respond({ jsonrpc: '2.0', id: null, error });
    this.abortAll();
    void this.end(1000);
  }

  /**
   * Joins gateway `id` (client.identify): refused with INVALID_PARAMS when it already joined
   * one or has calls waiting (they were counted as its own), and with LIMIT_EXCEEDED when the
   * gateway's or the gateways' connections are at their cap; the connection is then closed
   * after that answer, as one over the connection cap would have been.
   */
  joinGateway(id: string): void {
    if (this.gateway !== null) throw new WispError('INVALID_PARAMS', 'this connection already belongs to a gateway');
    if (this.pendingCalls > 0) throw new WispError('INVALID_PARAMS', 'a connection names its gateway before its first call');
    const refusal = this.server.joinGateway(this, id);
    if (refusal === null) {
      this.gateway = id;
      return;
    }
    this.options.logger.warn({ client: this.id, code: 'LIMIT_EXCEEDED', limit: refusal.limit }, 'a gateway connection over its cap; closing it');
    // Nothing more is read; the connection ends once its answers (this one's, written after the throw) are out.
    this.socket.pause();
    this.splitter.dispose();
    setImmediate(() => {
      this.abortAll();
      void this.answered().then(() => this.end(1000));
    });
    throw new WispError('LIMIT_EXCEEDED', refusal.message, { limit: refusal.limit, max: refusal.max });
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    // What it held of an unfinished frame goes back to the shared budget now, not when the socket is collected.
    this.splitter.dispose();
    this.abortAll();
    this.server.forget(this);
    for (const fn of this.closers.splice(0)) fn();
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
    const parsed = this.parseFrame(frame);
    if (parsed === undefined) return;
    if (Array.isArray(parsed.message)) this.handleBatch(parsed.message);
    else this.handleOne(parsed.message);
  }

  /** The frame's message; undefined when there is none (a blank line) or it was refused (already answered). */
  private parseFrame(frame: Buffer): { message: unknown } | undefined {
    const refuse = (error: ErrorBody): undefined => {
      this.respond({ jsonrpc: '2.0', id: null, error });
      return undefined;
    };
    let text: string;
    try {
      text = decoder.decode(frame);
    } catch {
      return refuse(errorBody('PARSE_ERROR', 'frame is not valid UTF-8'));
    }
    if (text.trim() === '') return undefined;
    if (textNestsDeeperThan(frame, LIMITS.maxFrameNesting)) {
      return refuse(
        errorBody('INVALID_REQUEST', `the frame nests deeper than ${LIMITS.maxFrameNesting} levels; it was not parsed`, {
          limit: 'maxFrameNesting',
          max: LIMITS.maxFrameNesting,
        }),
      );
    }
    try {
      return { message: JSON.parse(text) as unknown };
    } catch (error) {
      return refuse(errorBody('PARSE_ERROR', `invalid JSON: ${excerpt(error instanceof Error ? error.message : String(error), 200)}`));
    }
  }

  private handleBatch(batch: unknown[]): void {
    if (batch.length === 0) {
      this.respond({ jsonrpc: '2.0', id: null, error: errorBody('INVALID_REQUEST', 'empty batch') });
      return;
    }
    const maxBatch = this.options.maxBatchRequests ?? LIMITS.maxBatchRequests;
    if (batch.length > maxBatch) {
      // Refused whole, before any of it runs.
      this.respond({
        jsonrpc: '2.0',
        id: null,
        error: errorBody('LIMIT_EXCEEDED', `a batch holds at most ${maxBatch} requests (this one has ${batch.length}); nothing in it was run`, {
          limit: 'maxBatchRequests',
          max: maxBatch,
        }),
      });
      return;
    }
    const after: (() => void)[] = [];
    const outcomes = batch.map((item) => this.server.dispatch(this, item, after));
    if (outcomes.some(isThenable)) void this.answerLater(Promise.all(outcomes.map((o) => Promise.resolve(o))), after);
    else this.answer(outcomes as (Response | undefined)[], after);
  }

  private handleOne(message: unknown): void {
    const after: (() => void)[] = [];
    const outcome = this.server.dispatch(this, message, after);
    if (isThenable(outcome)) void this.answerLater(outcome, after);
    else this.answer(outcome, after);
  }

  /** The response (a batch's: those present), then what runs after it. */
  private answer(response: Response | undefined | (Response | undefined)[], after: (() => void)[]): void {
    if (Array.isArray(response)) {
      const present = response.filter((r): r is Response => r !== undefined);
      if (present.length > 0) this.respond(present);
    } else if (response !== undefined) this.respond(response);
    this.runAfter(after);
  }

  /** An answer that comes later: owed until written (one async frame, not a promise chain and a closure each). */
  private async answerLater(outcome: PromiseLike<Response | undefined | (Response | undefined)[]>, after: (() => void)[]): Promise<void> {
    this.owed += 1;
    try {
      this.answer(await outcome, after);
    } catch (error) {
      this.options.logger.error({ client: this.id, err: String(error) }, 'unexpected failure writing a response');
    } finally {
      this.owed -= 1;
      if (this.owed === 0 && this.onAnswered.length > 0) for (const resolve of this.onAnswered.splice(0)) resolve();
    }
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

}
