import type { CallSignal } from '../util/index.js';
import { Failure } from './failure.js';

/**
 * A connection's tool list from the moment it is declared changed (list_changed, a refresh)
 * until the new list is in: no call is sent meanwhile, and `settled` waits. A change that
 * ends without a new list (a failed refresh, a stop) is remembered: every later wait hears why.
 */
export class ListChange {
  private changing: { promise: Promise<void>; resolve: () => void; reject: (failure: Failure) => void } | undefined;
  private failure: Failure | undefined;

  /** Whether the tool list is changing: declared changed, the new one not yet in. */
  get isChanging(): boolean {
    return this.changing !== undefined;
  }

  /** Whether `settled` would resolve at once: the list is not changing, and no change ended badly. */
  get isSettled(): boolean {
    return this.changing === undefined && this.failure === undefined;
  }

  /** From now until `end`, the tool list is changing (nothing if it already is). */
  mark(): void {
    if (this.changing !== undefined) return;
    let resolve!: () => void;
    let reject!: (failure: Failure) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => undefined); // heard through settled(), if anyone waits
    this.changing = { promise, resolve, reject };
  }

  /** The change is over: the new list is in (no failure), or it never will be (then every wait hears why). */
  end(failure?: Failure): void {
    const changing = this.changing;
    if (changing === undefined) return;
    this.changing = undefined;
    if (failure === undefined) changing.resolve();
    else {
      this.failure = failure;
      changing.reject(failure);
    }
  }

  /**
   * Resolves once the tool list is not changing (at once when it is not). Rejects with what
   * ended the change when no new list came (the refresh's own error, a stop), or CANCELLED
   * when `signal` aborts first.
   */
  async settled(signal: CallSignal): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const changing = this.changing;
    if (changing === undefined) return;
    signal.throwIfAborted();
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        changing.promise,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(new Failure('CANCELLED', 'cancelled while waiting for the new tool list (the client that asked went away)'));
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }
}
