import { afterAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { WispError, type WispEvent } from '../../src/control/protocol.js';
import { activate, pidOf, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';

/** Bounded for CI; WISP_STRESS=1 runs the full size (250 calls per stream). */
const CALLS_PER_STREAM = process.env.WISP_STRESS === '1' ? 250 : 25;
const CLIENTS = 8;
const STREAMS_PER_CLIENT = 4;

const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

describe('load: many clients calling tools while the registry and tool lists change', () => {
  it('ends every call exactly once, leaks no approval and loses no event', async () => {
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'] });
    const admin = await daemon.connect();
    const follower = await daemon.connect();
    const seen: number[] = [];
    follower.onEvent((event: WispEvent) => seen.push(event.seq));
    await follower.call('events.subscribe', { since: 0 });

    const approver = await daemon.connect();
    approver.onEvent((event) => {
      if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
    });
    await approver.call('events.subscribe', {});

    const target = await registerScenario(admin, 'target');
    const active = await activate(admin, 'target');
    if (active.connection.status !== 'active') throw new Error('not active');
    const pid = pidOf(active);
    const bystander = await registerScenario(admin, 'bystander');

    const outcomes = new Map<string, number>();
    let finished = 0;
    let changes = 0; // each list_changed adds a tool: stay well under the 64-tool limit
    const total = CLIENTS * STREAMS_PER_CLIENT * CALLS_PER_STREAM;
    const clients: WispClient[] = await Promise.all(Array.from({ length: CLIENTS }, () => daemon.connect()));
    const chores: Promise<unknown>[] = [];
    const stream = async (client: WispClient, s: number): Promise<void> => {
      for (let i = 0; i < CALLS_PER_STREAM; i++) {
        let outcome: string;
        try {
          const result = await client.call('tools.call', { serviceId: target.id, toolName: 'echo', arguments: { text: `${s}-${i}` } });
          outcome = result.text === `${s}-${i}` ? 'ok' : 'WRONG_RESULT';
        } catch (error) {
          outcome = error instanceof WispError ? error.code : 'UNKNOWN';
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        finished += 1;
        // Mixed in: registry edits and tool-list changes, at points set by progress, not time.
        if (finished % 50 === 0) chores.push(admin.call('services.update', { id: bystander.id, set: { args: [String(finished)] } }));
        if (finished % 120 === 0 && changes++ < 30) process.kill(pid, 'SIGUSR2');
      }
    };
    await Promise.all(clients.flatMap((client, c) => Array.from({ length: STREAMS_PER_CLIENT }, (_, s) => stream(client, c * STREAMS_PER_CLIENT + s))));
    await Promise.all(chores);

    // Every call ended exactly once, each in a reported outcome.
    expect([...outcomes.values()].reduce((a, b) => a + b, 0)).toBe(total);
    expect(finished).toBe(total);
    expect([...outcomes.keys()].every((k) => ['ok', 'APPROVAL_STALE'].includes(k)), JSON.stringify([...outcomes])).toBe(true);
    expect(outcomes.get('ok') ?? 0).toBeGreaterThan(total / 2);
    // No approval leaks.
    expect((await admin.call('approvals.list')).approvals).toEqual([]);
    // No event lost for a subscriber that keeps up: seq 1..last with no gap.
    const last = (await follower.call('daemon.status')).lastSeq;
    expect(seen.length).toBe(last);
    expect(seen.every((seq, i) => seq === i + 1)).toBe(true);
    await admin.call('daemon.shutdown');
    await daemon.exited;
  }, 300_000);
});
