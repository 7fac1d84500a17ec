import { describe, expect, it } from 'vitest';
import { ATTEMPT_STARTED, InvalidAttemptTransition, STEPS, nextAttemptState, type AttemptState, type EndStatus, type Step } from '../../../src/core/index.js';

const AT = '2025-01-01T00:00:00.000Z';
const running = (step: Step | null): AttemptState => ({ ...ATTEMPT_STARTED, step });
const ERROR = { code: 'INSTALL_FAILED', message: 'npm failed' } as const;
const end = (status: EndStatus) => ({ type: 'end', status, at: AT, error: ERROR }) as const;
const SERVICE = { id: 'svc-1', name: 'server' };

describe('the install attempt state machine', () => {
  it('runs the steps forward only, and succeeds only after registering, with its service', () => {
    let state = running(null);
    for (const step of STEPS) state = nextAttemptState(state, { type: 'step', step });
    expect(nextAttemptState(state, { type: 'succeed', at: AT, service: SERVICE })).toEqual({
      status: 'succeeded',
      step: 'register',
      endedAt: AT,
      error: null,
      npmPid: null,
      serviceId: 'svc-1',
      serviceName: 'server',
    });
    expect(() => nextAttemptState(running('lock'), { type: 'step', step: 'prepare' })).toThrow(InvalidAttemptTransition);
    expect(() => nextAttemptState(running('lock'), { type: 'step', step: 'lock' })).toThrow(InvalidAttemptTransition);
    expect(() => nextAttemptState(running('install'), { type: 'succeed', at: AT, service: SERVICE })).toThrow(InvalidAttemptTransition);
  });

  it('keeps npm\'s pid through a step and clears it when the attempt ends', () => {
    const withNpm: AttemptState = { ...ATTEMPT_STARTED, step: 'lock', npmPid: 4242 };
    expect(nextAttemptState(withNpm, { type: 'step', step: 'verify' })).toMatchObject({ status: 'running', step: 'verify', npmPid: 4242 });
    expect(nextAttemptState(withNpm, end('cancelled'))).toMatchObject({ status: 'cancelled', npmPid: null });
  });

  it('ends a running attempt failed, cancelled, timed out or interrupted, with its error and the step it reached', () => {
    for (const status of ['failed', 'cancelled', 'timed_out', 'interrupted'] as const) {
      expect(nextAttemptState(running('lock'), end(status))).toEqual({ status, step: 'lock', endedAt: AT, error: ERROR, npmPid: null, serviceId: null, serviceName: null });
    }
    // Cancelled before its first step: it ended in none.
    expect(nextAttemptState(running(null), end('cancelled'))).toMatchObject({ status: 'cancelled', step: null });
  });

  it('never moves an ended attempt again (nothing but success is replayed)', () => {
    const succeeded = nextAttemptState(running('register'), { type: 'succeed', at: AT, service: SERVICE });
    const endedOnes = (['failed', 'cancelled', 'timed_out', 'interrupted'] as const).map((status) => nextAttemptState(running('verify'), end(status)));
    for (const ended of [succeeded, ...endedOnes]) {
      expect(() => nextAttemptState(ended, { type: 'step', step: 'install' })).toThrow(InvalidAttemptTransition);
      expect(() => nextAttemptState(ended, end('failed'))).toThrow(InvalidAttemptTransition);
      expect(() => nextAttemptState(ended, { type: 'succeed', at: AT, service: SERVICE })).toThrow(InvalidAttemptTransition);
    }
  });
});
