import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { listening } from '../helpers/egress.js';
import { describeSandbox, hostileServer } from '../helpers/sandbox.js';
import { activate, EventLog } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 34, the `ask` network mode: a real sandboxed server (fixtures/servers/hostile/egress.mjs)
// behind bwrap whose network is `ask` connects to a loopback HTTP server no grant covers. The
// connection waits on a network.connect approval that a human answers with wispctl: approve
// (this connection only), approve --always (a live grant, as wispctl mcp allow gives), or deny
// (refused, network.refused). The HTTP server counts what reaches it.

const root = tempDir('wisp-ask-');
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let log: EventLog;
let weather: Service;
let hits = 0;
const target = http.createServer((_req, res) => {
  hits += 1;
  res.end('asked hello');
});
let port = 0;

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;
const ctl = (args: string[]): ReturnType<typeof runWispctl> => runWispctl(['--socket', daemon.socket, ...args]);
const networkAsked = (): Approval[] => log.events.flatMap((e) => (e.type === 'approval.requested' && e.approval.kind === 'network.connect' ? [e.approval] : []));

/** Starts the fixture's `get` of the target and approves its tool call; `answer` is the call's answer, to be awaited later (wrapped: an async function's promise would wait for it). */
async function startGet(): Promise<{ answer: Promise<string> }> {
  const asked = log.next((e) => e.type === 'approval.requested' && e.approval.kind === 'tool_call') as Promise<Requested>;
  const pending = asker.call('tools.call', { serviceId: weather.id, toolName: 'get', arguments: { url: `http://127.0.0.2:${port}/ask` } }).then((result) => result.text);
  pending.catch(() => undefined);
  await human.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
  return { answer: pending };
}

/** The next network.connect approval asked. */
function nextNetworkApproval(): Promise<Approval> {
  return log.next((e) => e.type === 'approval.requested' && e.approval.kind === 'network.connect').then((e) => (e as Requested).approval);
}

describeSandbox('the ask network mode: a connection waits for a human (issue 34)', () => {
  beforeAll(async () => {
    port = await listening(target, '127.0.0.2');
    daemon = await startWispd(path.join(root.path, 'data'));
    asker = await daemon.connect();
    human = await daemon.connect();
    log = await EventLog.follow(human);
    const sandbox = { enabled: true, read: [], write: [], net: { mode: 'ask' as const } };
    await asker.call('services.register', { name: 'weather', command: process.execPath, args: [hostileServer, 'egress'], timeoutMs: 60_000, sandbox });
    weather = await activate(asker, 'weather');
    expect(weather.connection.status).toBe('active');
  });

  afterAll(async () => {
    await asker.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
    killLeftovers();
    await new Promise((resolve) => target.close(resolve));
    root.remove();
  });

  it('holds the connection on a network.connect approval with the host and port, shown by wispctl approvals; approve lets this one connection through', async () => {
    const asked = nextNetworkApproval();
    const { answer } = await startGet();
    const approval = await asked;
    expect(approval).toMatchObject({
      kind: 'network.connect',
      binding: { serviceId: weather.id, host: '127.0.0.2', port },
      summary: { serviceName: 'weather', arguments: { host: '127.0.0.2', port } },
      requester: { clientId: 'service:weather' },
      state: { status: 'pending' },
    });
    // Held: nothing has reached the destination while the human has not answered.
    expect(hits).toBe(0);
    const shown = await ctl(['approvals']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`approval ${approval.id} (pending): a network connection`);
    expect(shown.stdout).toContain(`connect to: 127.0.0.2:${port} (the connection waits for this answer)`);
    expect(shown.stdout).toContain(`wispctl approve ${approval.id} --always (also grants 127.0.0.2:${port} for good)`);
    const approved = await ctl(['approve', approval.id]);
    expect(approved).toMatchObject({ code: 0, stdout: `${approval.id}: approved\n` });
    expect(await answer).toBe('STATUS 200: asked hello');
    expect(hits).toBe(1);
    const { service } = await human.call('services.get', { id: weather.id });
    expect(service.sandbox).not.toHaveProperty('allowed');
  });

  it('asks again for the next connection (once is this connection only), and a denial refuses it with network.refused', async () => {
    const before = networkAsked().length;
    const asked = nextNetworkApproval();
    const { answer } = await startGet();
    const approval = await asked;
    expect(networkAsked().length).toBe(before + 1);
    const refused = log.next((e) => e.type === 'network.refused');
    expect(await ctl(['deny', approval.id])).toMatchObject({ code: 0, stdout: `${approval.id}: denied\n` });
    expect(await answer).toMatch(new RegExp(`^STATUS 403: Wisp's egress proxy: 127\\.0\\.0\\.2:${port} is not granted to this service`));
    expect(await refused).toMatchObject({ service: { name: 'weather' }, host: '127.0.0.2', port, reason: 'not-granted' });
    expect(hits).toBe(1);
  });

  it('a scope is refused on a denial and on any other kind of approval', async () => {
    const asked = nextNetworkApproval();
    const { answer } = await startGet();
    const approval = await asked;
    await expect(human.call('approvals.respond', { id: approval.id, decision: 'deny', scope: 'always' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    const other = log.next((e) => e.type === 'approval.requested' && e.approval.kind === 'tool_call') as Promise<Requested>;
    const call = asker.call('tools.call', { serviceId: weather.id, toolName: 'env', arguments: {} });
    const toolCall = (await other).approval;
    await expect(human.call('approvals.respond', { id: toolCall.id, decision: 'approve', scope: 'always' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await human.call('approvals.respond', { id: toolCall.id, decision: 'deny' });
    await expect(call).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    // Still pending after the refused answer: denied now.
    await human.call('approvals.respond', { id: approval.id, decision: 'deny' });
    expect(await answer).toMatch(/^STATUS 403: /);
    expect(hits).toBe(1);
  });

  it('approve --always lets it through and records a live grant (shown, revocable): the next connection asks nothing; revoked, it asks again', async () => {
    const asked = nextNetworkApproval();
    const { answer } = await startGet();
    const approval = await asked;
    const always = await ctl(['approve', approval.id, '--always']);
    expect(always.stderr).toBe('');
    expect(always).toMatchObject({ code: 0, stdout: `${approval.id}: approved (and 127.0.0.2:${port} granted to weather for good)\n` });
    expect(await answer).toBe('STATUS 200: asked hello');
    expect(hits).toBe(2);
    const { service } = await human.call('services.get', { id: weather.id });
    expect(service.sandbox).toMatchObject({ status: 'on', net: { mode: 'ask' }, allowed: [`127.0.0.2:${port}`] });
    expect((await ctl(['mcp', 'show', 'weather'])).stdout).toContain(`allowed: 127.0.0.2:${port} (live grants`);
    const before = networkAsked().length;
    expect(await (await startGet()).answer).toBe('STATUS 200: asked hello');
    expect(hits).toBe(3);
    expect(networkAsked().length).toBe(before);
    expect((await ctl(['mcp', 'allow', 'weather', `127.0.0.2:${port}`, '--revoke'])).code).toBe(0);
    const again = nextNetworkApproval();
    const { answer: last } = await startGet();
    expect((await again).binding).toMatchObject({ host: '127.0.0.2', port });
    await human.call('approvals.respond', { id: (await again).id, decision: 'deny' });
    expect(await last).toMatch(/^STATUS 403: /);
    expect(hits).toBe(3);
  });
});
