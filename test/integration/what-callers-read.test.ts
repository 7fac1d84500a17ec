import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispEvent } from '../../src/core/index.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { tempDir } from '../helpers/wispd.js';

/** Issue 18: what a caller and a status reader are told, in two cases they were told wrong. */
const homes: { remove: () => void }[] = [];
const daemons: InProcessDaemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  for (const home of homes.splice(0)) home.remove();
});

async function start(): Promise<InProcessDaemon> {
  const home = tempDir();
  homes.push(home);
  const daemon = await startInProcess(home.path);
  daemons.push(daemon);
  return daemon;
}

describe('what callers read', () => {
  it('a call waiting for its approval when the daemon stops is told the daemon is stopping, not that its asker went away', async () => {
    const daemon = await start();
    const log = await EventLog.follow(daemon.client);
    const service = await registerScenario(daemon.client, 'waits');
    await activate(daemon.client, 'waits');
    const caller = await daemon.connect();
    const asked = log.next((e) => e.type === 'approval.requested');
    const outcome = caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'never approved' } }).catch((e: unknown) => e);
    const { approval } = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    const cancelled = log.next((e) => e.type === 'approval.resolved' && e.approval.id === approval.id);
    await daemon.client.call('daemon.shutdown');
    expect(await outcome).toMatchObject({ code: 'CANCELLED', message: expect.stringContaining('the daemon is stopping') as string });
    expect(await cancelled).toMatchObject({ approval: { state: { status: 'cancelled', reason: 'the daemon is stopping' } } });
    await daemon.stopped;
  });

  it('a service registered after the daemon started has been disabled since it was registered', async () => {
    const daemon = await start();
    const { startedAt } = await daemon.client.call('daemon.status');
    // A registration within the same millisecond as the start would show no difference.
    while (new Date().toISOString() === startedAt) await new Promise<void>((resolve) => setImmediate(resolve));
    const service = await registerScenario(daemon.client, 'later');
    expect(service.connection).toEqual({ status: 'disabled', since: service.createdAt });
    expect(service.createdAt > startedAt).toBe(true);
    const { services } = await daemon.client.call('services.list');
    expect(services.find((s) => s.id === service.id)?.connection).toEqual({ status: 'disabled', since: service.createdAt });
  });

  it('a call reports how long it ran apart from how long it waited for its approval, in its result, its event and the audit log', async () => {
    const daemon = await start();
    const log = await EventLog.follow(daemon.client);
    const service = await registerScenario(daemon.client, 'timed');
    await activate(daemon.client, 'timed');
    const asked = log.next((e) => e.type === 'approval.requested');
    const pending = daemon.client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'timed' } });
    const { approval } = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    // The human takes a while: real time has to pass for the wait to be measured.
    const asking = 600;
    await new Promise<void>((resolve) => setTimeout(resolve, asking));
    const finished = log.next((e) => e.type === 'tool.call.finished' && e.call.approvalId === approval.id);
    const approvedAt = performance.now();
    await daemon.client.call('approvals.respond', { id: approval.id, decision: 'approve' });
    const result = await pending;
    const sinceApproved = performance.now() - approvedAt;
    expect(result.waitedMs).toBeGreaterThanOrEqual(asking);
    // The run is from sending the call to its answer: within what the caller saw after approving.
    expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(sinceApproved));
    expect(await finished).toMatchObject({ durationMs: result.durationMs, waitedMs: result.waitedMs });
    await daemon.stop();
    const audit = readFileSync(path.join(daemon.dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audit).toContainEqual(expect.objectContaining({ record: 'tool.call', approvalId: approval.id, durationMs: result.durationMs, waitedMs: result.waitedMs }));
  });

  it('a call whose server reports progress is not timed out while it does: each report starts the wait again', async () => {
    const daemon = await start();
    const log = await EventLog.follow(daemon.client);
    // 8 s: ample for the activation on a loaded machine; the call below runs longer than that in all.
    const service = await registerScenario(daemon.client, 'progressing', ['--progress-tool'], { timeoutMs: 8000 });
    await activate(daemon.client, 'progressing');
    const asked = log.next((e) => e.type === 'approval.requested');
    const pending = daemon.client.call('tools.call', { serviceId: service.id, toolName: 'slow-progress', arguments: { steps: 3, everyMs: 3000 } });
    const { approval } = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    await daemon.client.call('approvals.respond', { id: approval.id, decision: 'approve' });
    const result = await pending;
    expect(result.text).toBe('done after 3 steps');
    expect(result.durationMs).toBeGreaterThan(8000);
    expect((await daemon.client.call('services.get', { id: service.id })).service.connection.status).toBe('active');
  });
});

