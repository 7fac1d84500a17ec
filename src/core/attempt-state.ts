import { assertNever } from './assert-never.js';

export const STEPS = ['prepare', 'lock', 'verify', 'install', 'check_bin', 'register'] as const;
export type Step = (typeof STEPS)[number];
export type EndStatus = 'failed' | 'cancelled' | 'timed_out' | 'interrupted';
export type AttemptStatus = 'running' | 'succeeded' | EndStatus;

/** Where an attempt is: running through its steps in order, or ended (for good). */
export type AttemptState = { readonly status: AttemptStatus; readonly step: Step | null };

export type AttemptEvent =
  | { readonly type: 'step'; readonly step: Step }
  | { readonly type: 'succeed' }
  | { readonly type: 'end'; readonly status: EndStatus };

export class InvalidAttemptTransition extends Error {
  constructor(state: AttemptState, event: AttemptEvent) {
    super(`an install attempt cannot go from ${state.status}${state.step !== null ? `/${state.step}` : ''} on ${event.type}`);
  }
}

/**
 * The one transition function of an install attempt: running through prepare -> lock ->
 * verify -> install -> check_bin -> register (forward only) -> succeeded; a running attempt
 * may end failed, cancelled, timed_out or interrupted. An ended attempt never moves again:
 * nothing but success is ever replayed.
 */
export function nextAttemptState(state: AttemptState, event: AttemptEvent): AttemptState {
  if (state.status !== 'running') throw new InvalidAttemptTransition(state, event);
  switch (event.type) {
    case 'step':
      if (state.step !== null && STEPS.indexOf(event.step) <= STEPS.indexOf(state.step)) throw new InvalidAttemptTransition(state, event);
      return { status: 'running', step: event.step };
    case 'succeed':
      if (state.step !== 'register') throw new InvalidAttemptTransition(state, event);
      return { status: 'succeeded', step: state.step };
    case 'end':
      return { status: event.status, step: state.step };
    default:
      return assertNever(event);
  }
}
