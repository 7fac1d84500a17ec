import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, Task, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, EventLog, pidOf } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

// Issue 12, items 9 and 10: approvals are exact under races. A tool-list change freezes the
// service's approvals until the new list is in; stopping a service (disable, edit, delete)
// cancels its running calls at the server and the model tasks that use it, with the reason.

const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let humanLog: EventLog;

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'], env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-races-key-5521' }) });
  asker = await daemon.connect();
  human = await daemon.connect();
  humanLog = await EventLog.follow(human);
  await asker.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
});
beforeEach(() => mock.clear());
afterAll(async () => {
  await asker.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;
const nextApproval = (match: (a: Requested['approval']) => boolean = () => true) =>
  humanLog.next((e) => e.type === 'approval.requested' && match(e.approval)) as Promise<Requested>;

/** A call whose rejection is looked at later (marked handled so the order of replies does not matter). */
function callTool(serviceId: string, toolName: string, args: Record<string, unknown> = {}) {
  const pending = asker.call('tools.call', { serviceId, toolName, arguments: args });
  pending.catch(() => undefined);
  return pending;
}

async function approvalState(id: string): Promise<Approval['state']> {
  const found = (await human.call('approvals.list', { all: true })).approvals.find((a: Approval) => a.id === id);
  if (found === undefined) throw new Error(`no approval ${id}`);
  return found.state;
}

type RecordEntry = { event: string; version?: number; name?: string; requestId?: number; reason?: string };

function readRecord(file: string): RecordEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordEntry);
}

/** Waits (up to 15 s) until the server's record has an entry that matches: the server's own account of what reached it. */
async function recorded(file: string, match: (e: RecordEntry) => boolean): Promise<RecordEntry> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = readRecord(file).find(match);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`the server never recorded it; record: ${JSON.stringify(readRecord(file))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function registerHostile(name: string, mode: string, arg: string): Promise<Service> {
  // Signalled from outside and recording into the test's files: the sandbox is not what this tests.
  await asker.call('services.register', { name, command: process.execPath, args: [hostileServer, mode, arg], sandbox: NO_SANDBOX });
  return activate(asker, name);
}

function taskEnd(taskId: string): Promise<Task> {
  return humanLog
    .waitFor((e) => e.type === 'task.state' && e.task.id === taskId && !['running', 'awaiting_approval'].includes(e.task.state.status))
    .then((e) => (e as Extract<WispEvent, { type: 'task.state' }>).task);
}

describe('a tool-list change freezes approvals until the new list is in (item 9)', () => {
  const dir = tempDir();
  const record = path.join(dir.path, 'record.jsonl');
  let service: Service;
  let version = 0;
  afterAll(() => dir.remove());

  beforeAll(async () => {
    service = await registerHostile('relist', 'relist', dir.path);
  });

  /** Makes the server announce a change, and waits until the daemon has asked for the new list (so it is inside the window). */
  async function announceChange(): Promise<number> {
    version += 1;
    process.kill(pidOf(service), 'SIGUSR2');
    await recorded(record, (e) => e.event === 'list-asked' && e.version === version);
    return version;
  }
  /** Lets the server answer version `v` (`fail`: with an error). Written whole, then renamed: the server polls for the file and must never read it empty. */
  const release = (v: number, content = 'ok') => {
    const file = path.join(dir.path, `release-${v}`);
    writeFileSync(`${file}.tmp`, content);
    renameSync(`${file}.tmp`, file);
  };

  it('does not spend an approval answered in the window; an unchanged tool is asked again at the new version and runs after the new list', async () => {
    const asked = nextApproval((a) => a.summary.toolName === 'stable');
    const pending = callTool(service.id, 'stable', { note: 'hello' });
    const { approval: first } = await asked;
    const v = await announceChange();

    // The human answers inside the window: the answer is taken, the approval is not spent.
    const askedAgain = nextApproval((a) => a.summary.toolName === 'stable');
    expect((await human.call('approvals.respond', { id: first.id, decision: 'approve' })).approval.state.status).toBe('approved');
    expect(await approvalState(first.id)).toMatchObject({ status: 'approved' });
    expect(readRecord(record).filter((e) => e.event === 'call')).toEqual([]);

    release(v);
    // Bound to the tool-list version it was shown at: the old approval goes stale and the
    // same call is asked again, with the same arguments, at the new version.
    const { approval: second } = await askedAgain;
    expect(second.binding).toMatchObject({ toolName: 'stable', argumentsDigest: first.binding.argumentsDigest, toolListVersion: Number(first.binding.toolListVersion) + 1 });
    expect(second.summary.arguments).toEqual({ note: 'hello' });
    expect(await approvalState(first.id)).toMatchObject({ status: 'stale' });
    await human.call('approvals.respond', { id: second.id, decision: 'approve' });
    expect((await pending).text).toBe(`stable ran at version ${v}`);

    const events = readRecord(record);
    const calls = events.filter((e) => e.event === 'call');
    expect(calls).toEqual([{ event: 'call', name: 'stable', version: v }]);
    expect(events.findIndex((e) => e.event === 'call')).toBeGreaterThan(events.findIndex((e) => e.event === 'listed' && e.version === v));
  });

  /** `mutable` changes with every list, so since the last change it is held (tool pins): a human accepts it as it is now. */
  async function acceptHeld(): Promise<void> {
    const review = await human.call('tools.review', { serviceId: service.id });
    if (review.tools.length === 0) return;
    await human.call('tools.accept', { serviceId: service.id, toolListVersion: review.toolListVersion, tools: review.tools.map((t) => ({ name: t.name, digest: t.digest })) });
  }

  it('makes a call whose tool changed in the window stale, and sends nothing', async () => {
    await acceptHeld();
    const asked = nextApproval((a) => a.summary.toolName === 'mutable');
    const pending = callTool(service.id, 'mutable');
    const { approval } = await asked;
    const v = await announceChange();
    await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
    expect(await approvalState(approval.id)).toMatchObject({ status: 'approved' });
    release(v);
    await expect(pending).rejects.toMatchObject({ code: 'APPROVAL_STALE', message: expect.stringContaining('mutable') as string });
    expect(await approvalState(approval.id)).toMatchObject({ status: 'stale' });
    expect(readRecord(record).filter((e) => e.event === 'call' && e.name === 'mutable')).toEqual([]);
    // And the changed definition is held for a human, not offered.
    expect((await asker.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'mutable')?.pin).toBe('changed');
  });

  it('holds a call asked for in the window: its approval shows the new list', async () => {
    const v = await announceChange();
    const asked = nextApproval((a) => a.summary.toolName === 'stable');
    const pending = callTool(service.id, 'stable');
    // Same connection, in order: the call has reached the daemon, and no approval was shown yet.
    expect((await asker.call('approvals.list', {})).approvals.filter((a: Approval) => a.binding.serviceId === service.id)).toEqual([]);
    release(v);
    const { approval } = await asked;
    const { service: now } = await asker.call('services.get', { id: service.id });
    expect(now.connection).toMatchObject({ status: 'active', toolListVersion: approval.binding.toolListVersion });
    await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
    expect((await pending).text).toBe(`stable ran at version ${v}`);
  });

  it('asks a model task again across a change of its tool list, and the task goes on', async () => {
    const stable = (await asker.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'stable');
    if (stable === undefined) throw new Error('no stable tool');
    mock.enqueue({ events: toolCallEvents([{ id: 'call_stable', name: stable.modelName, arguments: '{"note":"from the task"}' }]) }, { events: textEvents('It ran.') });
    const { session } = await asker.call('sessions.create', { title: 'relist' });
    const asked = nextApproval((a) => a.requester.sessionId === session.id);
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'run stable' });
    const { approval: first } = await asked;
    const v = await announceChange();
    const askedAgain = nextApproval((a) => a.requester.sessionId === session.id);
    await human.call('approvals.respond', { id: first.id, decision: 'approve' });
    release(v);
    const { approval: second } = await askedAgain;
    expect(second.binding).toMatchObject({ toolName: 'stable', toolListVersion: Number(first.binding.toolListVersion) + 1 });
    await human.call('approvals.respond', { id: second.id, decision: 'approve' });
    expect((await taskEnd(task.id)).state).toEqual({ status: 'completed', finishReason: 'stop' });
    // The task waited on the first approval, then on the second; its state events name no
    // other (the event for the first may carry the newer approval when the two are close).
    const waits = humanLog.events.flatMap((e) => (e.type === 'task.state' && e.task.id === task.id && e.task.state.status === 'awaiting_approval' ? [e.task.state.approvalId] : []));
    expect(waits.at(-1)).toBe(second.id);
    expect(waits.every((id) => id === first.id || id === second.id)).toBe(true);
    const { messages } = await asker.call('sessions.get', { id: session.id });
    expect(messages.find((m) => m.role === 'tool')).toMatchObject({ content: `stable ran at version ${v}` });
  });

  it('fails the waiting calls with the discovery\'s error when the new list cannot be had', async () => {
    const before = readRecord(record).filter((e) => e.event === 'call').length;
    const asked = nextApproval((a) => a.summary.toolName === 'stable');
    const pending = callTool(service.id, 'stable');
    const first = await Promise.race([asked, pending.then((r) => ({ early: r }), (e: unknown) => ({ early: e }))]);
    if ('early' in first) throw new Error(`the call ended before its approval was asked: ${JSON.stringify(first.early)} ${String(first.early)}`);
    const { approval } = first;
    const v = await announceChange();
    await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
    release(v, 'fail');
    const error = (await pending.catch((e: unknown) => e)) as { code: string; message: string };
    const { service: failed } = await asker.call('services.get', { id: service.id });
    if (failed.connection.status !== 'failed') throw new Error(`expected failed, got ${failed.connection.status}`);
    expect(failed.connection.message).toContain('tool refresh failed');
    expect(error).toMatchObject({ code: failed.connection.code, message: failed.connection.message });
    expect(readRecord(record).filter((e) => e.event === 'call').length).toBe(before);
  });
});

describe('stopping a service cancels what runs on it (item 10)', () => {
  const dir = tempDir();
  let count = 0;
  afterAll(() => dir.remove());

  /** A fresh slow-tool service (each test stops its own), and its record file. */
  async function slowService(): Promise<{ service: Service; record: string }> {
    count += 1;
    const record = path.join(dir.path, `slow-${count}.jsonl`);
    return { service: await registerHostile(`slow-${count}`, 'slow-tool', record), record };
  }

  /** Starts a call of `slow` (answering once its stdin ends), approves it, and waits until the server has it. */
  async function runningCall(service: Service, record: string) {
    const asked = nextApproval((a) => a.binding.serviceId === service.id);
    const pending = callTool(service.id, 'slow', { untilStdinEnds: true });
    await human.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
    const started = await recorded(record, (e) => e.event === 'call');
    return { pending, requestId: started.requestId };
  }

  const stops: [string, (service: Service) => Promise<unknown>, string][] = [
    ['disabling', (s) => human.call('services.disable', { id: s.id }), 'disabled'],
    ['editing', (s) => human.call('services.update', { id: s.id, configVersion: s.configVersion, set: { timeoutMs: 20_000 } }), 'edited'],
    ['deleting', (s) => human.call('services.delete', { id: s.id }), 'deleted'],
  ];

  for (const [what, stop, word] of stops) {
    it(`${what} a service answers its running call CANCELLED before the process is gone, and the server is told`, async () => {
      const { service, record } = await slowService();
      // It answers once the stop ladder closes its stdin: a call left running would come back ok.
      const { pending, requestId } = await runningCall(service, record);
      const order: string[] = [];
      const settled = pending.then(
        () => order.push('call ok'),
        () => order.push('call failed'),
      );
      await stop(service).then(() => order.push('stopped'));
      await settled;
      await expect(pending).rejects.toMatchObject({ code: 'CANCELLED', message: expect.stringContaining(`slow-${count} was ${word}`) as string });
      expect(order).toEqual(['call failed', 'stopped']);
      // The stop ladder has ended the server: whatever it recorded, it recorded before.
      expect(readRecord(record)).toContainEqual(expect.objectContaining({ event: 'cancelled', requestId }));
      expect(readRecord(record).filter((e) => e.event === 'answered')).toEqual([]);
    });
  }

  async function modelTask(service: Service, text: string) {
    const slow = (await asker.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'slow');
    if (slow === undefined) throw new Error('no slow tool');
    mock.enqueue(
      { events: toolCallEvents([{ id: 'call_slow', name: slow.modelName, arguments: '{}' }]) },
      { events: textEvents('The slow tool did not run; carrying on.') },
    );
    const { session } = await asker.call('sessions.create', { title: 'uses slow' });
    const asked = nextApproval((a) => a.requester.sessionId === session.id);
    const { task } = await asker.call('sessions.send', { id: session.id, text });
    return { session, task, asked };
  }

  it('disabling a service ends a model task whose call waits for approval: cancelled, with the reason', async () => {
    const { service } = await slowService();
    const { session, task, asked } = await modelTask(service, 'run slow, waiting');
    const { approval } = await asked;
    await human.call('services.disable', { id: service.id });
    const ended = await taskEnd(task.id);
    expect(ended.state).toEqual({ status: 'cancelled', reason: `the service slow-${count} was disabled` });
    expect(await approvalState(approval.id)).toMatchObject({ status: 'cancelled' });
    expect((await asker.call('sessions.get', { id: session.id })).tasks.find((t) => t.id === task.id)?.state).toEqual(ended.state);
    // The model was not asked again: the task ended, it did not carry on.
    expect(mock.requests.filter((r) => JSON.stringify(r.body.messages).includes('run slow, waiting'))).toHaveLength(1);
  });

  it('disabling a service ends a model task whose call is running: cancelled, with the reason, and the server is told', async () => {
    const { service, record } = await slowService();
    const { task, asked } = await modelTask(service, 'run slow, running');
    await human.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
    const { requestId } = await recorded(record, (e) => e.event === 'call');
    await human.call('services.disable', { id: service.id });
    const ended = await taskEnd(task.id);
    expect(ended.state).toEqual({ status: 'cancelled', reason: `the service slow-${count} was disabled` });
    expect(readRecord(record)).toContainEqual(expect.objectContaining({ event: 'cancelled', requestId }));
    expect(mock.requests.filter((r) => JSON.stringify(r.body.messages).includes('run slow, running'))).toHaveLength(1);
  });
});
