import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RefreshThrottle } from '../../../src/mcp/refresh-throttle.js';

const limits = { perWindow: 3, windowMs: 1000, maxThrottledMs: 3000 };

describe('RefreshThrottle', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('lets perWindow through at once, coalesces the rest into one run when the window allows, then lets through again', () => {
    const run = vi.fn();
    const throttle = new RefreshThrottle(run, limits, () => Date.now());
    expect([1, 2, 3].map(() => throttle.heard().kind)).toEqual(['now', 'now', 'now']);
    vi.advanceTimersByTime(100);
    expect([1, 2, 3, 4, 5].map(() => throttle.heard().kind)).toEqual(['later', 'later', 'later', 'later', 'later']);
    expect(throttle.waiting).toBe(true);
    vi.advanceTimersByTime(899);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
    expect(throttle.waiting).toBe(false);
    // A burst, then quiet for two windows: a fresh start, never a failure.
    vi.advanceTimersByTime(2001);
    expect([1, 2, 3].map(() => throttle.heard().kind)).toEqual(['now', 'now', 'now']);
  });

  it('answers sustained once it keeps being held back maxThrottledMs after the first, and runs nothing after', () => {
    const run = vi.fn();
    const throttle = new RefreshThrottle(run, limits, () => Date.now());
    const kinds: string[] = [];
    // Four a second, each 250 ms: over the 3 a second allowed.
    for (let t = 0; t <= 4000; t += 250) {
      vi.setSystemTime(t);
      const heard = throttle.heard();
      kinds.push(heard.kind);
      if (heard.kind === 'sustained') {
        expect(heard.message).toContain('faster than 3 in 1 s for 3 s in a row');
        break;
      }
      vi.advanceTimersByTime(0);
    }
    expect(kinds.at(-1)).toBe('sustained');
    expect(kinds.filter((k) => k === 'now').length).toBeLessThanOrEqual(3 * 4);
    const runs = run.mock.calls.length;
    throttle.stop();
    vi.advanceTimersByTime(10_000);
    expect(run.mock.calls.length).toBe(runs);
  });
});
