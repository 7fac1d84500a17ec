import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../../../src/core/index.js';
import { CallClock } from '../../../src/mcp/call-clock.js';

/** A call's time limit: progress restarts it, a request waiting for the human stops it, the overall cap holds throughout. */
describe('CallClock', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('expires with TIMEOUT once the limit passes without progress', () => {
    const clock = new CallClock();
    clock.start(1000);
    vi.advanceTimersByTime(999);
    expect(clock.expired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(clock.signal.reason).toMatchObject({ code: 'TIMEOUT', message: 'the server did not answer within 1000 ms' });
  });

  it('starts again at each progress report', () => {
    const clock = new CallClock();
    clock.start(1000);
    vi.advanceTimersByTime(800);
    clock.touch();
    vi.advanceTimersByTime(800);
    expect(clock.expired).toBe(false);
    vi.advanceTimersByTime(200);
    expect(clock.expired).toBe(true);
  });

  it('stops while held (also when several requests hold it), and runs again in full after the last release', () => {
    const clock = new CallClock();
    clock.start(1000);
    vi.advanceTimersByTime(900);
    const first = clock.hold();
    const second = clock.hold();
    vi.advanceTimersByTime(60_000);
    first();
    first(); // a second release of the same hold changes nothing
    vi.advanceTimersByTime(60_000);
    expect(clock.expired).toBe(false);
    second();
    vi.advanceTimersByTime(999);
    expect(clock.expired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(clock.expired).toBe(true);
  });

  it('never expires once the call ended', () => {
    const clock = new CallClock();
    clock.start(1000);
    clock.stop();
    vi.advanceTimersByTime(LIMITS.maxCallMs * 2);
    expect(clock.expired).toBe(false);
  });

  it('ends at the overall cap (maxCallMs, or the limit if longer) while held, and while progress keeps restarting the limit', () => {
    const held = new CallClock();
    held.start(1000);
    held.hold();
    vi.advanceTimersByTime(LIMITS.maxCallMs - 1);
    expect(held.expired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(held.expiry).toMatchObject({ code: 'TIMEOUT', message: `the server did not answer within ${LIMITS.maxCallMs} ms` });

    const busy = new CallClock();
    busy.start(1000);
    for (let at = 0; at < LIMITS.maxCallMs - 500; at += 500) {
      vi.advanceTimersByTime(500);
      busy.touch();
    }
    expect(busy.expired).toBe(false);
    vi.advanceTimersByTime(500);
    expect(busy.expiry?.message).toBe(`the server did not answer within ${LIMITS.maxCallMs} ms`);

    const long = new CallClock();
    long.start(LIMITS.maxCallMs + 5);
    expect(long.capMs).toBe(LIMITS.maxCallMs + 5);
    vi.advanceTimersByTime(LIMITS.maxCallMs + 4);
    expect(long.expired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(long.expired).toBe(true);
  });
});
