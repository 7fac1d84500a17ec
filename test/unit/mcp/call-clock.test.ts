import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../../../src/core/index.js';
import { CallClock } from '../../../src/mcp/call-clock.js';

/** A call's time limit: progress restarts it, a request waiting for the human stops it, the SDK keeps the overall cap. */
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
    clock.requestOptions(new AbortController().signal).onprogress();
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

  it('never expires once the call ended; the SDK\'s timeout is the overall cap', () => {
    const clock = new CallClock();
    clock.start(1000);
    clock.stop();
    vi.advanceTimersByTime(10_000);
    expect(clock.expired).toBe(false);
    expect(clock.requestOptions(new AbortController().signal).timeout).toBe(LIMITS.maxCallMs);
    clock.start(LIMITS.maxCallMs + 5);
    expect(clock.capMs).toBe(LIMITS.maxCallMs + 5);
    clock.stop();
  });
});
