import type { AttemptError, InstallAttempt } from './wire/install-shapes.js';
import { assertNever } from './assert-never.js';

export const STEPS = ['prepare', 'lock', 'verify', 'install', 'check_bin', 'register'] as const;
export type Step = (typeof STEPS)[number];
export type EndStatus = 'failed' | 'cancelled' | 'timed_out' | 'interrupted';
export type AttemptStatus = 'running' | 'succeeded' | EndStatus;

/** The fields of an attempt that its lifecycle owns; the rest (plan, runtime, log) never depend on the status. */
type LifecycleKey = 'status' | 'step' | 'endedAt' | 'error' | 'npmPid' | 'serviceId' | 'serviceName';
type Lifecycle<A> = A extends Record<LifecycleKey, unknown> ? Pick<A, LifecycleKey> : never;

/**
 * Where an attempt is, with that state's data: running has its step (null before the first)
 * and npm's pid; succeeded has its service; failed, cancelled, timed_out and interrupted
 * have their error and the step they ended in. Derived from the wire InstallAttempt.
 */
export type AttemptState = Lifecycle<InstallAttempt>;
export type RunningAttemptState = Extract<AttemptState, { status: 'running' }>;
export type SucceededAttemptState = Extract<AttemptState, { status: 'succeeded' }>;
export type EndedAttemptState = Extract<AttemptState, { status: EndStatus }>;

export type AttemptEvent =
  | { readonly type: 'step'; readonly step: Step }
  | { readonly type: 'succeed'; readonly at: string; readonly service: { readonly id: string; readonly name: string } }
  | { readonly type: 'end'; readonly status: EndStatus; readonly at: string; readonly error: AttemptError };

/** The state of a new attempt: running, before its first step. */
export const ATTEMPT_STARTED: RunningAttemptState = { status: 'running', step: null, endedAt: null, error: null, npmPid: null, serviceId: null, serviceName: null };

export class InvalidAttemptTransition extends Error {
  constructor(
    readonly state: AttemptState,
    readonly event: AttemptEvent,
  ) {
    super(`an install attempt cannot go from ${state.status}${state.step !== null ? `/${state.step}` : ''} on ${event.type}`);
  }
}

/**
 * The one transition function of an install attempt: running through prepare -> lock ->
 * verify -> install -> check_bin -> register (forward only) -> succeeded; a running attempt
 * may end failed, cancelled, timed_out or interrupted. An ended attempt never moves again:
 * nothing but success is ever replayed.
 */
export function nextAttemptState(state: AttemptState, event: AttemptEvent & { type: 'step' }): RunningAttemptState;
export function nextAttemptState(state: AttemptState, event: AttemptEvent & { type: 'succeed' }): SucceededAttemptState;
export function nextAttemptState(state: AttemptState, event: AttemptEvent & { type: 'end' }): EndedAttemptState;
export function nextAttemptState(state: AttemptState, event: AttemptEvent): AttemptState;
export function nextAttemptState(state: AttemptState, event: AttemptEvent): AttemptState {
  if (state.status !== 'running') throw new InvalidAttemptTransition(state, event);
  switch (event.type) {
    case 'step':
      if (state.step !== null && STEPS.indexOf(event.step) <= STEPS.indexOf(state.step)) throw new InvalidAttemptTransition(state, event);
      return { ...state, step: event.step };
    case 'succeed':
      if (state.step !== 'register') throw new InvalidAttemptTransition(state, event);
      return { status: 'succeeded', step: state.step, endedAt: event.at, error: null, npmPid: null, serviceId: event.service.id, serviceName: event.service.name };
    case 'end':
      return ended(event.status, { step: state.step, endedAt: event.at, error: event.error, npmPid: null, serviceId: null, serviceName: null });
    default:
      return assertNever(event);
  }
}

/** An ended state (the four carry the same data; TypeScript wants each status spelled out). */
function ended(status: EndStatus, data: Omit<EndedAttemptState, 'status'>): EndedAttemptState {
  switch (status) {
    case 'failed':
      return { status, ...data };
    case 'cancelled':
      return { status, ...data };
    case 'timed_out':
      return { status, ...data };
    case 'interrupted':
      return { status, ...data };
    default:
      return assertNever(status);
  }
}
