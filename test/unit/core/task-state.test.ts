import { describe, expect, it } from 'vitest';
import { InvalidTaskTransition, isFinished, nextTaskState, type TaskEvent, type TaskState } from '../../../src/core/index.js';

describe('the task state machine', () => {
  it('goes running <-> awaiting_approval, and ends completed, failed, cancelled or interrupted', () => {
    const awaiting = nextTaskState({ status: 'running' }, { type: 'await', approvalId: 'a1' });
    expect(awaiting).toEqual({ status: 'awaiting_approval', approvalId: 'a1' });
    expect(nextTaskState(awaiting, { type: 'await', approvalId: 'a2' })).toEqual({ status: 'awaiting_approval', approvalId: 'a2' });
    expect(nextTaskState(awaiting, { type: 'resume' })).toEqual({ status: 'running' });
    expect(nextTaskState({ status: 'running' }, { type: 'fail', code: 'MODEL_STALLED', message: 'silent' })).toEqual({ status: 'failed', code: 'MODEL_STALLED', message: 'silent' });
    expect(nextTaskState(awaiting, { type: 'interrupt', reason: 'stopped' })).toEqual({ status: 'interrupted', reason: 'stopped' });
  });

  it.each<[string, TaskState, TaskEvent]>([
    ['resume while running', { status: 'running' }, { type: 'resume' }],
    ['anything once completed', { status: 'completed', finishReason: 'stop' }, { type: 'resume' }],
    ['fail once cancelled', { status: 'cancelled', reason: 'asked' }, { type: 'fail', code: 'TIMEOUT', message: 'late' }],
    ['await once failed', { status: 'failed', code: 'TIMEOUT', message: 'late' }, { type: 'await', approvalId: 'a1' }],
  ])('refuses an impossible transition with a named error: %s', (_name, state, event) => {
    expect(() => nextTaskState(state, event)).toThrow(InvalidTaskTransition);
    try {
      nextTaskState(state, event);
    } catch (error) {
      expect(error).toMatchObject({ state, event, message: `a ${state.status} task cannot take ${event.type}` });
    }
    expect(isFinished(state)).toBe(state.status !== 'running');
  });
});
