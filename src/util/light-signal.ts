/**
 * What the tool-call path asks of a signal. AbortSignal has all of it, and so has
 * LightSignal: the path takes either (a model task's calls come with an AbortSignal, a
 * socket request's with a LightSignal).
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * An abort signal for one socket request that waits (a tool call). Why not AbortController:
 * on Node 20 one costs about 4 us to make (an EventTarget, with its own maps), and adding or
 * removing a listener about 1 us each; a call is in flight across a scavenge, so the young
 * generation promoted about 1.1 KB of it per call. This is a flag, a reason and a short list.
 * As with AbortSignal, each listener runs once, in the order added; one added after the
 * abort never runs; a listener that throws does not stop the others (the error is thrown
 * from a microtask, as an uncaught error).
 */
export class LightSignal implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Every listener runs once anyway: `once` changes nothing. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.listeners?.splice(at, 1);
  }
}
