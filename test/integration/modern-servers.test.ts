import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernHttpServer, type ModernHttpFixture } from '../../fixtures/servers/modern-server.mjs';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { activate, EventLog, pidOf, registerScenario } from '../helpers/services.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Servers of the 2026-07-28 revision (fixtures/servers/modern-server.mjs, on the successor SDK's
 * @modelcontextprotocol/server 2.4.0, refusing the 2025 handshake) through a real daemon: they
 * activate, their tools are discovered page by page, calls wait for approval, an input_required
 * reaches the human as an elicitation, a list change is followed and the new tool held, and the
 * daemon says which revision each connection speaks. A 2025 server beside it is unchanged.
 */
const modernServer = path.join(repoRoot, 'fixtures', 'servers', 'modern-server.mjs');
const home = tempDir();
let daemon: RunningDaemon;
let caller: WispClient;
let human: WispClient;
let humanLog: EventLog;
let approvals = 0;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  caller = await daemon.connect();
  human = await daemon.connect();
  human.onEvent((event) => {
    if (event.type !== 'approval.requested') return;
    approvals += 1;
    void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  humanLog = await EventLog.follow(human);
});
afterAll(async () => {
  await caller.close();
  await human.close();
  killLeftovers();
  home.remove();
});

async function registerModern(name: string, args: string[]): Promise<Service> {
  // Unsandboxed: the test signals the server's own process and hands it a file of the test's.
  await caller.call('services.register', { name, command: process.execPath, args: [modernServer, ...args], sandbox: NO_SANDBOX });
  return activate(caller, name);
}

const toolNames = async (service: Service): Promise<string[]> => (await caller.call('tools.list', { serviceId: service.id })).tools.map((t) => t.name).sort();

describe('a 2026-07-28 server over stdio', () => {
  let service: Service;

  beforeAll(async () => {
    service = await registerModern('modern', ['--tools', '5', '--page-size', '2']);
  });

  it('activates, speaking 2026-07-28, with every page of its tools', async () => {
    expect(service.connection).toMatchObject({ status: 'active', toolCount: 7, server: { name: 'modern-fixture', version: '2.0.0', protocolVersion: '2026-07-28' } });
    expect(await toolNames(service)).toEqual(['confirm', 'echo', 'tool-0', 'tool-1', 'tool-2', 'tool-3', 'tool-4']);
  });

  it('runs a call once it is approved', async () => {
    const before = approvals;
    const result = await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'hello 2026' } });
    expect(result.text).toBe('hello 2026');
    expect(approvals).toBe(before + 1);
  });

  it('puts an input_required elicitation before the human and sends the answer back', async () => {
    const asked = humanLog.next((e) => e.type === 'elicitation.requested') as Promise<Extract<WispEvent, { type: 'elicitation.requested' }>>;
    const call = caller.call('tools.call', { serviceId: service.id, toolName: 'confirm', arguments: { action: 'deploy' } });
    const { elicitation } = await asked;
    expect(elicitation).toMatchObject({ service: { id: service.id, name: 'modern' }, mode: 'form', message: 'Really deploy?', status: 'pending' });
    await human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { confirm: true } });
    expect((await call).text).toBe('confirmed: deploy');
    // A decline goes back the same way.
    const again = humanLog.next((e) => e.type === 'elicitation.requested') as Promise<Extract<WispEvent, { type: 'elicitation.requested' }>>;
    const declined = caller.call('tools.call', { serviceId: service.id, toolName: 'confirm', arguments: { action: 'drop' } });
    await human.call('elicitations.respond', { id: (await again).elicitation.id, action: 'decline' });
    expect((await declined).text).toBe('not confirmed (decline)');
  });

  it('follows a tool-list change (subscriptions/listen) and holds the new tool for review', async () => {
    const held = humanLog.next((e) => e.type === 'tools.held' && e.serviceId === service.id);
    process.kill(pidOf(service), 'SIGUSR2');
    expect(await held).toMatchObject({ added: ['changed-1'], changed: [] });
    const listed = (await caller.call('tools.list', { serviceId: service.id })).tools;
    expect(listed.find((t) => t.name === 'changed-1')).toMatchObject({ pin: 'added' });
    expect(listed.find((t) => t.name === 'echo')).toMatchObject({ pin: 'trusted' });
  });
});

describe('a 2026-07-28 server over streamable HTTP', () => {
  let fixture: ModernHttpFixture;
  let service: Service;
  /** The headers of the requests the fixture received for `method`. */
  const sentFor = (method: string) => fixture.headers.filter((h) => h['mcp-method'] === method);

  beforeAll(async () => {
    fixture = await startModernHttpServer({ tools: 3, pageSize: 2 });
    await caller.call('services.registerRemote', { name: 'modern-web', url: fixture.url });
    service = await activate(caller, 'modern-web');
  });
  afterAll(() => fixture.close());

  it('activates, speaking 2026-07-28, with every page of its tools and the headers the revision requires', async () => {
    expect(service.connection).toMatchObject({ status: 'active', pid: null, toolCount: 5, server: { name: 'modern-fixture', protocolVersion: '2026-07-28' } });
    expect(await toolNames(service)).toEqual(['confirm', 'echo', 'tool-0', 'tool-1', 'tool-2']);
    // Three pages of tools/list, each a stateless POST naming its method and revision; no session.
    expect(sentFor('tools/list')).toHaveLength(3);
    for (const h of [...sentFor('server/discover'), ...sentFor('tools/list')]) expect(h).toMatchObject({ 'mcp-protocol-version': '2026-07-28' });
    expect(fixture.headers.some((h) => h['mcp-session-id'] !== undefined)).toBe(false);
  });

  it('runs a call once it is approved, naming the tool in Mcp-Name, and puts an input_required before the human', async () => {
    const before = approvals;
    expect((await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'over http 2026' } })).text).toBe('over http 2026');
    expect(approvals).toBe(before + 1);
    expect(sentFor('tools/call').map((h) => h['mcp-name'])).toEqual(['echo']);
    const asked = humanLog.next((e) => e.type === 'elicitation.requested') as Promise<Extract<WispEvent, { type: 'elicitation.requested' }>>;
    const call = caller.call('tools.call', { serviceId: service.id, toolName: 'confirm', arguments: { action: 'ship' } });
    const { elicitation } = await asked;
    expect(elicitation).toMatchObject({ service: { id: service.id, name: 'modern-web' }, message: 'Really ship?' });
    await human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { confirm: true } });
    expect((await call).text).toBe('confirmed: ship');
    // The retry carried the answer: two POSTs of tools/call for confirm, one call approved.
    expect(sentFor('tools/call').map((h) => h['mcp-name'])).toEqual(['echo', 'confirm', 'confirm']);
    expect(approvals).toBe(before + 2);
  });

  it('follows a tool-list change on its listen stream and holds the new tool for review', async () => {
    const held = humanLog.next((e) => e.type === 'tools.held' && e.serviceId === service.id);
    fixture.changeTools();
    expect(await held).toMatchObject({ added: ['changed-1'], changed: [] });
    expect((await caller.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'changed-1')).toMatchObject({ pin: 'added' });
  });
});

describe('both eras side by side', () => {
  it('says 2025-11-25 for a 2025 server', async () => {
    await registerScenario(caller, 'classic');
    expect((await activate(caller, 'classic')).connection).toMatchObject({ status: 'active', server: { protocolVersion: '2025-11-25' } });
  });

  it('keeps a tool pinned on 2025 pinned when the same server comes back speaking 2026', async () => {
    const mode = path.join(home.path, 'mode');
    writeFileSync(mode, 'dual');
    const first = await registerModern('mover', ['--mode-file', mode]);
    expect(first.connection).toMatchObject({ status: 'active', server: { protocolVersion: '2025-11-25' } });
    await caller.call('services.disable', { id: first.id });
    writeFileSync(mode, 'modern');
    const second = await activate(caller, 'mover');
    expect(second.connection).toMatchObject({ status: 'active', server: { protocolVersion: '2026-07-28' } });
    const listed = (await caller.call('tools.list', { serviceId: second.id })).tools;
    expect(listed.map((t) => [t.name, t.pin]).sort()).toEqual([
      ['confirm', 'trusted'],
      ['echo', 'trusted'],
    ]);
    expect((await caller.call('tools.call', { serviceId: second.id, toolName: 'echo', arguments: { text: 'still pinned' } })).text).toBe('still pinned');
  });
});
