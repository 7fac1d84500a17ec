import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkedSignal } from '../../../src/util/index.js';

describe('linkedSignal', () => {
  it('aborts with the reason of whichever source aborts first', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkedSignal(a.signal, b.signal);
    b.abort(new Error('b went away'));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('b went away');
    a.abort(new Error('too late'));
    expect((linked.signal.reason as Error).message).toBe('b went away');
  });

  it('starts aborted when a source already is', () => {
    const a = new AbortController();
    a.abort('gone');
    expect(linkedSignal(a.signal).signal.reason).toBe('gone');
  });

  it('leaves nothing on a long-lived source once disposed, however many requests it served', () => {
    const connection = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const linked = linkedSignal(connection.signal);
      // What the SDK does with a request's signal: a listener it never removes.
      linked.signal.addEventListener('abort', () => undefined);
      linked.dispose();
    }
    expect(getEventListeners(connection.signal, 'abort')).toHaveLength(0);
    const after = linkedSignal(connection.signal);
    connection.abort('closed');
    expect(after.signal.aborted).toBe(true);
  });
});
