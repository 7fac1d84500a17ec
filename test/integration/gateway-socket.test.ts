import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { RawClient, killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * The two socket methods the MCP gateway uses (issue 16), at the socket: client.identify
 * names a connection everywhere it is recorded; rpc.cancel cancels one running request of
 * the same connection.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let echoName: string;

type Resolved = Extract<WispEvent, { type: 'approval.resolved' }>;
type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await registerScenario(admin, 'files');
  const files = await activate(admin, 'files');
  echoName = (await admin.call('tools.list', { serviceId: files.id })).tools.find((tool) => tool.name === 'echo')?.modelName ?? '';
});

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('client.identify', () => {
  it('names the connection once: its client id in daemon.status, approvals (requester and by) and the audit log', async () => {
    const named = await daemon.connect();
    const { clientId } = await named.call('client.identify', { name: 'mcp:some-client' });
    expect(clientId).toMatch(/^client-\d+ \(mcp:some-client\)$/);
    expect((await named.call('daemon.status')).you.clientId).toBe(clientId);
    await expect(named.call('client.identify', { name: 'other' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    const requested = log.next((e) => e.type === 'approval.requested');
    const call = named.call('tools.call', { modelName: echoName, arguments: { text: 'named' } });
    const approval = ((await requested) as Requested).approval;
    expect(approval.requester.clientId).toBe(clientId);
    const answered = await named.call('approvals.respond', { id: approval.id, decision: 'approve' });
    expect(answered.approval.state).toMatchObject({ status: 'approved', by: clientId });
    expect((await call).text).toBe('named');
    const audit = readFileSync(path.join(home.path, 'audit.jsonl'), 'utf8');
    expect(audit).toContain(`"client":${JSON.stringify(clientId)}`);
    await named.close();
  });

  it('refuses a name with spaces, control characters or over 64 characters', async () => {
    const raw = await daemon.connect();
    for (const name of ['two words', 'bell\u0007', 'x'.repeat(65), '-leading']) {
      await expect(raw.call('client.identify', { name })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    }
    expect((await raw.call('daemon.status')).you.clientId).toMatch(/^client-\d+$/);
    await raw.close();
  });
});

describe('rpc.cancel', () => {
  it('cancels a tools.call waiting for its approval: the approval ends cancelled with the reason, the call CANCELLED', async () => {
    const raw = await RawClient.connect(daemon.socket);
    const requested = log.next((e) => e.type === 'approval.requested');
    raw.request(7, 'tools.call', { modelName: echoName, arguments: { text: 'waits' } });
    const approval = ((await requested) as Requested).approval;
    const resolved = log.next((e) => e.type === 'approval.resolved' && e.approval.id === approval.id);
    raw.request(8, 'rpc.cancel', { id: 7, reason: 'changed my mind' });
    const messages = (await raw.waitFor(2)) as { id: number; result?: unknown; error?: { data?: { code?: string } } }[];
    expect(messages.find((m) => m.id === 8)?.result).toEqual({ cancelled: true });
    expect(messages.find((m) => m.id === 7)?.error?.data?.code).toBe('CANCELLED');
    expect(((await resolved) as Resolved).approval.state).toMatchObject({ status: 'cancelled', reason: 'changed my mind' });
    raw.close();
  });

  it('answers cancelled: false for an id that does not run, and never touches another connection\'s request', async () => {
    const other = await RawClient.connect(daemon.socket);
    const requested = log.next((e) => e.type === 'approval.requested');
    other.request(3, 'tools.call', { modelName: echoName, arguments: { text: 'other' } });
    const approval = ((await requested) as Requested).approval;
    const raw = await RawClient.connect(daemon.socket);
    raw.request(1, 'rpc.cancel', { id: 3 });
    raw.request(2, 'rpc.cancel', { id: 'never-sent' });
    const answers = (await raw.waitFor(2)) as { id: number; result?: unknown }[];
    expect(answers.map((a) => a.result)).toEqual([{ cancelled: false }, { cancelled: false }]);
    expect((await admin.call('approvals.list')).approvals.find((a) => a.id === approval.id)?.state.status).toBe('pending');
    await admin.call('approvals.respond', { id: approval.id, decision: 'deny' });
    const [answer] = (await other.waitFor(1)) as { error?: { data?: { code?: string } } }[];
    expect(answer?.error?.data?.code).toBe('APPROVAL_DENIED');
    raw.close();
    other.close();
  });
});
