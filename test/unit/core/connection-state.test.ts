import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../../src/core/index.js';
import { InvalidTransition, transition, type ConnectionEvent } from '../../../src/core/index.js';

const at = '2026-01-01T00:00:00.000Z';
const server = { name: 's', version: '1', protocolVersion: '2025-11-25' };

function run(events: ConnectionEvent[], from: ConnectionState = { status: 'disabled', since: at }): ConnectionState {
  return events.reduce((state, event) => transition(state, event, at), from);
}

const happy: ConnectionEvent[] = [
  { type: 'activate', generation: 1 },
  { type: 'spawned', pid: 42 },
  { type: 'initialized' },
  { type: 'discovered', toolCount: 3, toolListVersion: 1, server },
];

describe('connection state machine', () => {
  it('goes disabled -> activating(spawning, initializing, discovering) -> active', () => {
    expect(run(happy)).toEqual({ status: 'active', generation: 1, pid: 42, toolCount: 3, toolListVersion: 1, server, since: at });
  });

  it('updates an active connection on rediscovery, keeping pid and since', () => {
    const later = transition(run(happy), { type: 'discovered', toolCount: 4, toolListVersion: 2, server }, '2026-02-02T00:00:00.000Z');
    expect(later).toMatchObject({ status: 'active', pid: 42, toolCount: 4, toolListVersion: 2, since: at });
  });

  it.each([1, 2, 3, 4])('can fail after %i steps, then start a new generation', (steps) => {
    const failedState = run([...happy.slice(0, steps), { type: 'failed', code: 'TIMEOUT', message: 'slow' }]);
    expect(failedState).toEqual({ status: 'failed', generation: 1, code: 'TIMEOUT', message: 'slow', at });
    expect(transition(failedState, { type: 'activate', generation: 2 }, at)).toMatchObject({ status: 'activating', phase: 'spawning', generation: 2 });
  });

  it('stops through stopping to disabled from activating, active and failed', () => {
    for (const prefix of [happy.slice(0, 2), happy, [...happy, { type: 'failed', code: 'SERVER_EXITED', message: 'gone' } as const]]) {
      const stopping = run([...prefix, { type: 'stop' }]);
      expect(stopping.status).toBe('stopping');
      expect(transition(stopping, { type: 'stopped' }, at)).toEqual({ status: 'disabled', since: at });
    }
  });

  it.each<[string, ConnectionEvent[]]>([
    ['activate while active', [...happy, { type: 'activate', generation: 2 }]],
    ['spawned twice', [...happy.slice(0, 2), { type: 'spawned', pid: 1 }]],
    ['discovered before initialize', [...happy.slice(0, 2), { type: 'discovered', toolCount: 1, toolListVersion: 1, server }]],
    ['stopped without stop', [...happy, { type: 'stopped' }]],
    ['stop while disabled', [{ type: 'stop' }]],
    ['fail while disabled', [{ type: 'failed', code: 'SPAWN_FAILED', message: 'y' }]],
  ])('refuses an impossible transition: %s', (_name, events) => {
    expect(() => run(events)).toThrow(InvalidTransition);
  });
});
