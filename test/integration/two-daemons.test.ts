import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { tempDir } from '../helpers/wispd.js';

/**
 * Nothing in a daemon is global: two run in one process, each on its own data dir and
 * socket, and share no registry, event stream or approval.
 */
describe('two daemons in one process', () => {
  const homes = [tempDir(), tempDir()] as const;
  let a: InProcessDaemon;
  let b: InProcessDaemon;
  let logA: EventLog;
  let logB: EventLog;

  beforeAll(async () => {
    [a, b] = await Promise.all([startInProcess(homes[0].path), startInProcess(homes[1].path)]);
    [logA, logB] = await Promise.all([EventLog.follow(a.client), EventLog.follow(b.client)]);
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    for (const home of homes) home.remove();
  });

  /** Starts a call and answers its approval on the daemon that asked. */
  async function callApproved(client: WispClient, log: EventLog, serviceId: string, text: string): Promise<{ text: string; approvalId: string }> {
    const asked = log.next((e) => e.type === 'approval.requested' && JSON.stringify(e.approval.summary.arguments) === JSON.stringify({ text }));
    const call = client.call('tools.call', { serviceId, toolName: 'echo', arguments: { text } });
    const { approval } = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    await client.call('approvals.respond', { id: approval.id, decision: 'approve' });
    return call;
  }

  it('each has its own data dir, socket and run', async () => {
    const [statusA, statusB] = await Promise.all([a.client.call('daemon.status'), b.client.call('daemon.status')]);
    expect(statusA.paths).toMatchObject({ dataDir: homes[0].path, socket: a.socket, registryFile: path.join(homes[0].path, 'mcp-servers.json') });
    expect(statusB.paths).toMatchObject({ dataDir: homes[1].path, socket: b.socket, registryFile: path.join(homes[1].path, 'mcp-servers.json') });
    expect(a.socket).not.toBe(b.socket);
    expect(statusA.runId).not.toBe(statusB.runId);
  });

  it('keeps its own registry: the same name registers on both, each lists only its own', async () => {
    const onA = await registerScenario(a.client, 'twin');
    const onB = await registerScenario(b.client, 'twin', ['--tools', '2']);
    expect(onA.id).not.toBe(onB.id);
    expect((await a.client.call('services.list')).services.map((s) => [s.id, s.args])).toEqual([[onA.id, onA.args]]);
    expect((await b.client.call('services.list')).services.map((s) => [s.id, s.args])).toEqual([[onB.id, onB.args]]);
  });

  it('keeps its own events and approvals: a call on one is asked of that daemon\'s clients only', async () => {
    const onA = await activate(a.client, 'twin');
    expect(onA.connection).toMatchObject({ status: 'active', toolCount: 2 });
    const asked = logA.next((e) => e.type === 'approval.requested');
    const call = a.client.call('tools.call', { serviceId: onA.id, toolName: 'echo', arguments: { text: 'from A' } });
    const { approval } = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    // B neither lists A's approval nor can answer it.
    expect((await b.client.call('approvals.list', {})).approvals).toEqual([]);
    await expect(b.client.call('approvals.respond', { id: approval.id, decision: 'approve' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    await a.client.call('approvals.respond', { id: approval.id, decision: 'approve' });
    expect((await call).text).toBe('from A');
    // Nothing of A reached B's event stream; B's twin was never touched.
    expect(logA.events.some((e) => JSON.stringify(e).includes(approval.id))).toBe(true);
    expect(JSON.stringify(logB.events)).not.toContain(onA.id);
    expect(JSON.stringify(logB.events)).not.toContain(approval.id);
    expect((await b.client.call('services.get', { name: 'twin' })).service.connection.status).toBe('disabled');
  });

  it('stops on its own: the other keeps serving', async () => {
    const onB = await activate(b.client, 'twin');
    expect(onB.connection).toMatchObject({ status: 'active', toolCount: 4 });
    await a.stop();
    await a.stopped;
    await expect(a.connect()).rejects.toThrow();
    expect((await callApproved(b.client, logB, onB.id, 'B still here')).text).toBe('B still here');
  });
});
