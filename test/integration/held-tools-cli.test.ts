import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 33 (also found): held (changed) tools were invisible where people look: `mcp list`,
 * `activate` and `restart` said "2 tools" with an empty reason. A real server (rug-server)
 * changes a pinned tool after its first call; every place wispctl shows the tool count then
 * says how many are held and how to review them, and `status` and `mcp list` say how many
 * services are connected and where starting them stands (seed 002's /mcp panel).
 */
const rugServer = path.join(repoRoot, 'fixtures', 'servers', 'rug-server.mjs');
const home = tempDir();
// The server's own state directory, granted to its sandbox (write), as a user would grant it.
const stateDir = path.join(home.path, 'rug');
mkdirSync(stateDir);
const stateFile = path.join(stateDir, 'rug-state');
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
let notesId = '';
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);
const HELD = '1 held for review: wispctl mcp review notes';

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'), { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  // --state: once changed, a restarted server starts changed, so a restart meets the same held tool.
  await client.call('services.register', { name: 'notes', command: process.execPath, args: [rugServer, '--change', 'description', '--state', stateFile], sandbox: { enabled: true, read: [], write: [stateDir], net: { mode: 'none' } } });
  await client.call('services.register', { name: 'broken', command: path.join(home.path, 'no-such-program') });
  notesId = (await activate(client, 'notes')).id;
  const asked = log.next((e) => e.type === 'approval.requested');
  const call = client.call('tools.call', { serviceId: notesId, toolName: 'read_notes', arguments: {} });
  await client.call('approvals.respond', { id: ((await asked) as Extract<WispEvent, { type: 'approval.requested' }>).approval.id, decision: 'approve' });
  await call;
  await log.waitFor((e) => e.type === 'tools.held' && e.serviceId === notesId);
  expect((await activate(client, 'broken')).connection.status).toBe('failed');
}, 60_000);

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await client.close();
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('held tools where the tool count is shown', () => {
  it('the service view carries heldTools, and daemon.status the summary', async () => {
    const { services } = await client.call('services.list');
    expect(services.map((s) => [s.name, s.heldTools])).toEqual([
      ['notes', 1],
      ['broken', 0],
    ]);
    const status = await client.call('daemon.status');
    expect(status.services).toEqual({ total: 2, connected: 1, phase: { status: 'some_failed', failed: 1, needsAuth: 0, of: 2 }, held: [{ service: 'notes', tools: 1 }] });
  });

  it('mcp list: the TOOLS cell counts the held, the REASON says how to review, and the last line is the connection count and phase', async () => {
    const list = await ctl('mcp', 'list');
    expect(list.code, list.stderr).toBe(0);
    const row = list.stdout.split('\n').find((line) => line.startsWith('notes '));
    expect(row).toMatch(/^notes\s+active\s+\d+\s+2 \(1 held\)\s+\S+\s+stdio\s+on, net none\s+1 held for review: wispctl mcp review notes$/);
    expect(list.stdout.trimEnd().split('\n').at(-1)).toBe('1 of 2 connected; some failed (1 of 2)');
    const wide = await ctl('mcp', 'list', '-o', 'wide');
    expect(wide.stdout).toContain(HELD);
    expect(wide.stdout.trimEnd().split('\n').at(-1)).toBe('1 of 2 connected; some failed (1 of 2)');
  });

  it('mcp show says it on its state line', async () => {
    const show = await ctl('mcp', 'show', 'notes');
    expect(show.stdout).toMatch(new RegExp(`^state: +active \\(pid \\d+, 2 tools, ${HELD}\\)$`, 'm'));
  });

  it('wispctl status: connected, the phase, and which services hold tools', async () => {
    const status = await ctl('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('\nconnected: 1 of 2\nphase:     some failed (1 of 2)\nheld:      1 tool held for review: wispctl mcp review notes\n');
  });

  it('mcp restart and mcp activate say it once the server is up again', async () => {
    const restarted = await ctl('mcp', 'restart', 'notes', '--yes');
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(restarted.stdout).toMatch(new RegExp(`^notes: active \\(pid \\d+, 2 tools, ${HELD}\\)\\n$`));
    expect((await ctl('mcp', 'disable', 'notes')).code).toBe(0);
    const activated = await ctl('mcp', 'activate', 'notes', '--yes');
    expect(activated.code, activated.stderr).toBe(0);
    expect(activated.stdout).toMatch(new RegExp(`^notes: active \\(pid \\d+, 2 tools, ${HELD}\\)\\n$`));
  });

  it('while a service starts, the phase says so; once reviewed, nothing is held', async () => {
    await registerScenario(client, 'slow', ['--init-delay', '600000'], { timeoutMs: 600_000 });
    const started = log.next((e) => e.type === 'service.state' && e.service.name === 'slow' && e.connection.status === 'activating' && e.connection.phase === 'initializing');
    const activating = activate(client, 'slow');
    await started;
    const status = await ctl('status');
    expect(status.stdout).toContain('\nconnected: 1 of 3\nphase:     starting 1 of 3 (1 failed)\n');
    expect((await ctl('mcp', 'list')).stdout.trimEnd().split('\n').at(-1)).toBe('1 of 3 connected; starting 1 of 3 (1 failed)');
    await client.call('services.disable', { name: 'slow' });
    expect((await activating).connection.status).not.toBe('active');

    expect((await ctl('mcp', 'review', 'notes', '--yes')).code).toBe(0);
    const list = await ctl('mcp', 'list');
    expect(list.stdout).toMatch(/^notes\s+active\s+\d+\s+2\s+\S+\s+stdio\s+on, net none$/m);
    expect(list.stdout).not.toContain('held');
    expect((await ctl('status')).stdout).not.toContain('held:');
  });
});
