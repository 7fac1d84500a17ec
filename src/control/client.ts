import net from 'node:net';
import { LineSplitter } from '../util/line-splitter.js';
import { WispError, isErrorCode } from '../core/index.js';
import { LIMITS } from '../core/index.js';
import type { MethodName, Params, Result, WispEvent } from '../core/index.js';
import { checkSocketPath } from './paths.js';

export { locatePaths, resolvePaths, type WispPaths } from './paths.js';

/**
 * The typed client for the control socket, used by wispctl, tests and front-ends.
 * Loads nothing but Node's net module and the protocol types, so a CLI starts fast.
 */
export class WispClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly eventListeners = new Set<(event: WispEvent) => void>();
  private readonly closeListeners = new Set<(error?: Error) => void>();
  private closed = false;
  /**
   * The daemon's own word when it ended this connection (an error with id null: over the
   * connection cap, a frame too large): a later call is told that, not "closed", since a
   * refusal can arrive before the first call is written.
   */
  private endedBy: WispError | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly socketPath: string,
  ) {
    const splitter = new LineSplitter(
      LIMITS.maxControlFrameBytes * 64,
      (frame) => this.onFrame(frame),
      () => this.fail(new WispError('INTERNAL_ERROR', 'the daemon sent an oversized frame')),
    );
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new WispError('DAEMON_NOT_RUNNING', 'the connection to the daemon closed')));
  }

  /** Connects, or fails with DAEMON_NOT_RUNNING when nothing answers on the socket (PATH_TOO_LONG when it cannot be one). */
  static connect(socketPath: string): Promise<WispClient> {
    return new Promise((resolve, reject) => {
      // A path past the platform's limit cannot name a socket: say so, not "no daemon answers".
      checkSocketPath(socketPath);
      const socket = net.createConnection(socketPath);
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(new WispClient(socket, socketPath));
      });
      socket.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED' || error.code === 'ENOTSOCK') {
          reject(
            new WispError('DAEMON_NOT_RUNNING', `no daemon answers on ${socketPath} (start one with: wispctl daemon start)`, {
              socket: socketPath,
              cause: error.code,
            }),
          );
        } else reject(error);
      });
    });
  }

  call<M extends MethodName>(method: M, ...args: object extends Params<M> ? [params?: Params<M>] : [params: Params<M>]): Promise<Result<M>> {
    return this.send<M>(method, args[0] ?? {}).answer;
  }

  private send<M extends MethodName>(method: M, params: object): { id: number; answer: Promise<Result<M>> } {
    const id = this.nextId++;
    if (this.closed) {
      const why = this.endedBy === null ? new WispError('DAEMON_NOT_RUNNING', 'the connection to the daemon is closed') : new WispError(this.endedBy.code, this.endedBy.message, this.endedBy.details);
      return { id, answer: Promise.reject(why) };
    }
    const answer = new Promise<Result<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
    return { id, answer };
  }

  /**
   * call(), cancellable: when `signal` aborts while the daemon still runs the request, the
   * daemon is asked to cancel it (rpc.cancel, with the abort's reason when it is a string)
   * and the daemon's answer, usually CANCELLED, settles the promise.
   */
  callCancellable<M extends MethodName>(signal: AbortSignal, method: M, params: Params<M>): Promise<Result<M>> {
    const { id, answer } = this.send<M>(method, params);
    const onAbort = (): void => {
      if (!this.pending.has(id) || this.closed) return;
      const reason = typeof signal.reason === 'string' ? signal.reason.replace(/\0/g, '').slice(0, 200) : undefined;
      this.call('rpc.cancel', { id, ...(reason !== undefined ? { reason } : {}) }).catch(() => undefined);
    };
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      const forget = (): void => signal.removeEventListener('abort', onAbort);
      answer.then(forget, forget);
    }
    return answer;
  }

  onEvent(listener: (event: WispEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Called once when the connection ends; with an error unless close() ended it. */
  onClose(listener: (error?: Error) => void): void {
    this.closeListeners.add(listener);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end();
      for (const listener of this.closeListeners) listener();
    });
  }

  private onFrame(frame: Buffer): void {
    let message: unknown;
    try {
      message = JSON.parse(frame.toString('utf8'));
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const m = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (m.method === 'event' && m.id === undefined) {
      for (const listener of this.eventListeners) listener(m.params as WispEvent);
      return;
    }
    if (typeof m.id !== 'number') {
      if (m.error !== undefined) {
        const error = toWispError(m.error);
        this.endedBy ??= error;
        this.fail(error);
      }
      return;
    }
    const waiter = this.pending.get(m.id);
    if (waiter === undefined) return;
    this.pending.delete(m.id);
    if (m.error !== undefined) waiter.reject(toWispError(m.error));
    else waiter.resolve(m.result);
  }

  private fail(error: Error): void {
    const wasClosed = this.closed;
    this.closed = true;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.socket.destroy();
    if (!wasClosed) for (const listener of this.closeListeners) listener(error);
    this.closeListeners.clear();
  }
}

function toWispError(raw: unknown): WispError {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as { message?: unknown; data?: unknown };
  const data = (typeof body.data === 'object' && body.data !== null ? body.data : {}) as Record<string, unknown>;
  const message = typeof body.message === 'string' ? body.message : 'unknown error';
  const { code, ...details } = data;
  return isErrorCode(code)
    ? new WispError(code, message, details)
    : new WispError('INTERNAL_ERROR', message, { ...details, remoteCode: code });
}
export { packageVersion } from '../util/version.js';
