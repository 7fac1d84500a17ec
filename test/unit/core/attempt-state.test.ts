import { describe, expect, it } from 'vitest';
import { InvalidAttemptTransition, nextAttemptState, type AttemptState } from '../../../src/core/index.js';

const running = (step: AttemptState['step']): AttemptState => ({ status: 'running', step });

describe('the install attempt state machine', () => {
  it('runs the steps forward only, and succeeds only after registering', () => {
    let state = running(null);
    for (const step of ['prepare', 'lock', 'verify', 'install', 'check_bin', 'register'] as const) state = nextAttemptState(state, { type: 'step', step });
    expect(nextAttemptState(state, { type: 'succeed' })).toEqual({ status: 'succeeded', step: 'register' });
    expect(() => nextAttemptState(running('lock'), { type: 'step', step: 'prepare' })).toThrow(InvalidAttemptTransition);
    expect(() => nextAttemptState(running('lock'), { type: 'step', step: 'lock' })).toThrow(InvalidAttemptTransition);
    expect(() => nextAttemptState(running('install'), { type: 'succeed' })).toThrow(InvalidAttemptTransition);
  });

  it('ends a running attempt failed, cancelled, timed out or interrupted, keeping the step it reached', () => {
    for (const status of ['failed', 'cancelled', 'timed_out', 'interrupted'] as const) {
      expect(nextAttemptState(running('lock'), { type: 'end', status })).toEqual({ status, step: 'lock' });
    }
  });

  it('never moves an ended attempt again (nothing but success is replayed)', () => {
    for (const status of ['succeeded', 'failed', 'cancelled', 'timed_out', 'interrupted'] as const) {
      const ended: AttemptState = { status, step: 'verify' };
      expect(() => nextAttemptState(ended, { type: 'step', step: 'install' })).toThrow(InvalidAttemptTransition);
      expect(() => nextAttemptState(ended, { type: 'end', status: 'failed' })).toThrow(InvalidAttemptTransition);
    }
  });
});
