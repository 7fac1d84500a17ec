import type { ErrorCode } from './errors.js';
import type { TaskState } from './wire/shapes.js';
import { assertNever } from './assert-never.js';

export type { TaskState };

export type TaskEvent =
  | { readonly type: 'await'; readonly approvalId: string }
  | { readonly type: 'resume' }
  | { readonly type: 'complete'; readonly finishReason: string }
  | { readonly type: 'fail'; readonly code: ErrorCode; readonly message: string }
  | { readonly type: 'cancel'; readonly reason: string }
  | { readonly type: 'interrupt'; readonly reason: string };

export class InvalidTaskTransition extends Error {
  constructor(
    readonly state: TaskState,
    readonly event: TaskEvent,
  ) {
    super(`a ${state.status} task cannot take ${event.type}`);
  }
}

export function isFinished(state: TaskState): boolean {
  return state.status !== 'running' && state.status !== 'awaiting_approval';
}

/**
 * running <-> awaiting_approval -> completed | failed | cancelled; interrupted when the
 * daemon stopped under it. awaiting_approval -> awaiting_approval: a call asked again.
 */
export function nextTaskState(state: TaskState, event: TaskEvent): TaskState {
  if (isFinished(state)) throw new InvalidTaskTransition(state, event);
  switch (event.type) {
    case 'await':
      if (state.status === 'running' || state.status === 'awaiting_approval') return { status: 'awaiting_approval', approvalId: event.approvalId };
      break;
    case 'resume':
      if (state.status === 'awaiting_approval') return { status: 'running' };
      break;
    case 'complete':
      return { status: 'completed', finishReason: event.finishReason };
    case 'fail':
      return { status: 'failed', code: event.code, message: event.message };
    case 'cancel':
      return { status: 'cancelled', reason: event.reason };
    case 'interrupt':
      return { status: 'interrupted', reason: event.reason };
    default:
      return assertNever(event);
  }
  throw new InvalidTaskTransition(state, event);
}
