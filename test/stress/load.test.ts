import { afterAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { WispError, type WispEvent } from '../../src/core/index.js';
import { readFileSync } from 'node:fs';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, pidOf, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

/** Bounded for CI; WISP_STRESS=1 runs the full size (250 calls per stream). */
const CALLS_PER_STREAM = process.env.WISP_STRESS === '1' ? 250 : 25;
const CLIENTS = 8;
const STREAMS_PER_CLIENT = 4;
/** Each client also runs a model session: 2 turns of 4 tool calls, then an answer. */
const SESSION_TURNS = 2;
const CALLS_PER_TURN = 4;
/** Generous: catches a runaway, not noise (the benchmark measures memory). */
const MAX_RSS_MB = 400;

const home = tempDir();
const mock = new MockDeepSeek();
afterAll(async () => {
  killLeftovers();
  await mock.stop();
  home.remove();
});

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

describe('load: many clients calling tools while the registry and tool lists change', () => {
  it('ends every call exactly once, leaks no approval, loses no event and keeps its memory bounded', async () => {
    const modelUrl = await mock.start();
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'], env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-load' }) });
    const admin = await daemon.connect();
    await admin.call('model.setSettings', { baseUrl: modelUrl, model: 'mock-model', maxRetries: 0 });
    const follower = await daemon.connect();
    const seen: number[] = [];
    follower.onEvent((event: WispEvent) => seen.push(event.seq));
    await follower.call('events.subscribe', { since: 0 });

    const approver = await daemon.connect();
    approver.onEvent((event) => {
      if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
    });
    await approver.call('events.subscribe', {});

    // Signalled from outside (list_changed on SIGUSR2): its own pid is the listed one only unsandboxed.
    const target = await registerScenario(admin, 'target', [], { sandbox: NO_SANDBOX });
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
    // The model sessions: every tool-call turn is queued before the answers, so each session
    // keeps asking until it gets an answer, and all the proposed calls are made.
    const echoName = (await admin.call('tools.list', { serviceId: target.id })).tools.find((t) => t.name === 'echo')?.modelName ?? '';
    for (let t = 0; t < SESSION_TURNS; t++) {
      for (let c = 0; c < CLIENTS; c++) {
        const calls = Array.from({ length: CALLS_PER_TURN }, (_, k) => ({ id: `c${c}t${t}k${k}`, name: echoName, arguments: JSON.stringify({ text: `model-${c}-${t}-${k}` }) }));
        mock.enqueue({ events: toolCallEvents(calls) });
      }
    }
    for (let c = 0; c < CLIENTS; c++) mock.enqueue({ events: textEvents(`answer ${c}`) });
    const rssBefore = rssMb(daemon.pid);
    const sessions = await Promise.all(clients.map(async (client, c) => (await client.call('sessions.create', { title: `load ${c}` })).session.id));
    const tasks = await Promise.all(clients.map(async (client, c) => (await client.call('sessions.send', { id: sessions[c] ?? '', text: 'use the tools' })).task.id));
    const ended = (taskId: string): Promise<unknown> =>
      new Promise((resolve) => {
        const check = (event: WispEvent): void => {
          if (event.type === 'task.state' && event.task.id === taskId && !['running', 'awaiting_approval'].includes(event.task.state.status)) resolve(event.task.state);
        };
        follower.onEvent(check);
      });
    const endings = tasks.map(ended);

    await Promise.all(clients.flatMap((client, c) => Array.from({ length: STREAMS_PER_CLIENT }, (_, s) => stream(client, c * STREAMS_PER_CLIENT + s))));
    await Promise.all(chores);
    const states = await Promise.all(endings);
    expect(states.every((state) => (state as { status: string }).status === 'completed'), JSON.stringify(states)).toBe(true);
    // Every call a model proposed ended once, in a tool message the model read.
    const toolMessages = (await Promise.all(sessions.map((id) => admin.call('sessions.get', { id })))).flatMap((r) => r.messages.filter((m) => m.role === 'tool'));
    expect(toolMessages).toHaveLength(CLIENTS * SESSION_TURNS * CALLS_PER_TURN);
    expect(new Set(toolMessages.map((m) => m.tool_call_id)).size).toBe(toolMessages.length);
    const rssAfter = rssMb(daemon.pid);
    expect(rssAfter, `RSS ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB after`).toBeLessThan(MAX_RSS_MB);

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
