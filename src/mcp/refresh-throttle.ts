import { LIMITS } from '../core/index.js';

/** How often a server's list_changed may make the daemon read its tool list (LIMITS, or a test's own). */
export interface RefreshLimits {
  readonly perWindow: number;
  readonly windowMs: number;
  readonly maxThrottledMs: number;
}

export const REFRESH_LIMITS: RefreshLimits = {
  perWindow: LIMITS.maxToolRefreshesPerWindow,
  windowMs: LIMITS.toolRefreshWindowMs,
  maxThrottledMs: LIMITS.maxToolRefreshThrottleMs,
};

/** What a server's list_changed leads to: a refresh now, one already waiting (the change joins it), or the end of the connection. */
export type Heard = { readonly kind: 'now' } | { readonly kind: 'later' } | { readonly kind: 'sustained'; readonly message: string };

/**
 * Bounds the refreshes a server's notifications/tools/list_changed cause: at most
 * `perWindow` in any `windowMs` (a sliding window). One past it is held back: it and every
 * later one until then are coalesced into a single refresh when the window allows (`run`).
 * While they are held back the list counts as changing (the connection marks it), so no call
 * is sent at a version the server declared changed. When one is held back `maxThrottledMs`
 * or more after the first of a stretch in which no two windows in a row went without one
 * held back (the server keeps outrunning the budget), the answer is `sustained`: the
 * connection fails. A loop between services (a server that lists Wisp's own
 * gateway, which announces every change the daemon makes) ends so, instead of running
 * forever at full CPU.
 */
export class RefreshThrottle {
  /** When each refresh of the current window was let through, oldest first. */
  private readonly starts: number[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Since when list_changed keep being held back: set at the first held back, cleared after two quiet windows (none held back). */
  private throttledSince: number | undefined;
  private lastHeldBack = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly run: () => void,
    private readonly limits: RefreshLimits = REFRESH_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a held-back refresh is waiting: the list is still changing, whatever refresh ends meanwhile. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** A list_changed came: what to do with it (`now`: the caller refreshes at once; `later`: `run` will). */
  heard(): Heard {
    const t = this.now();
    const { perWindow, windowMs, maxThrottledMs } = this.limits;
    while (this.starts.length > 0 && (this.starts[0] as number) <= t - windowMs) this.starts.shift();
    // Two windows without one held back: whatever came before was a burst, not a flood.
    if (t - this.lastHeldBack > 2 * windowMs) this.throttledSince = undefined;
    if (this.timer === undefined && this.starts.length < perWindow) {
      this.starts.push(t);
      return { kind: 'now' };
    }
    this.lastHeldBack = t;
    this.throttledSince ??= t;
    if (t - this.throttledSince >= maxThrottledMs) {
      this.stop();
      return {
        kind: 'sustained',
        message:
          `the server kept announcing tool-list changes (notifications/tools/list_changed) faster than ${perWindow} in ${windowMs / 1000} s ` +
          `for ${maxThrottledMs / 1000} s in a row: it was stopped (a loop between services, such as a server that lists Wisp's own gateway, does this)`,
      };
    }
    if (this.timer === undefined) {
      const at = (this.starts[0] ?? t) + windowMs;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.starts.push(this.now());
        this.run();
      }, Math.max(0, at - t));
      this.timer.unref();
    }
    return { kind: 'later' };
  }

  /** The connection ended: nothing held back runs. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
