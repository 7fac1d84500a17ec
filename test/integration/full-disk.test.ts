import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { activate, EventLog, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

// Issue 33, MED 4: with the data dir on a full disk, an activation answered `active` while
// tool-pins/ stayed empty, approved calls ran with no audit record, and after a restart a
// changed tool was pinned as trusted. The daemon runs here on a real 512 KB tmpfs (its own
// mount namespace, via unshare), which the test fills and empties.

const canMount = needs(spawnSync('unshare', ['-r', '-m', 'true']).status === 0, 'unshare -r -m is not allowed here (user namespaces disabled?): the full-disk tests, which mount a tmpfs');
const home = tempDir();
const runtime = tempDir('wisp-run-');
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
/** The data dir as the test reaches it: through the daemon's own root (its mount namespace). */
let dataDir: string;
const filler = (): string => path.join(dataDir, 'filler');

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

/** Fills the tmpfs until the kernel says there is no space left. */
function fillDisk(): void {
  const fd = openSync(filler(), 'a');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
}

/** Calls a tool and approves it from the same client; resolves with the outcome. */
async function approvedCall(service: Service, toolName: string): Promise<{ ok: true; text: string } | { ok: false; code: string; message: string }> {
  const asked = log.next((e) => e.type === 'approval.requested');
  const call = client.call('tools.call', { serviceId: service.id, toolName, arguments: {} });
  const { approval } = (await asked) as Requested;
  await client.call('approvals.respond', { id: approval.id, decision: 'approve' });
  return call.then(
    (result) => ({ ok: true as const, text: result.text }),
    (error: unknown) => ({ ok: false as const, code: (error as { code: string }).code, message: (error as Error).message }),
  );
}

beforeAll(async () => {
  if (!canMount) return;
  // The tmpfs is mounted over the data dir inside the daemon's namespace only; the socket lives outside it.
  const mount = 'mount -t tmpfs -o size=512k,mode=0700 tmpfs "$0" && exec "$@"';
  daemon = await startWispd(home.path, { wrap: ['unshare', '-r', '-m', 'sh', '-c', mount, home.path], args: ['--runtime-dir', runtime.path, '--stop-grace-ms', '200'] });
  dataDir = `/proc/${daemon.pid}/root${home.path}`;
  client = await daemon.connect();
  log = await EventLog.follow(await daemon.connect());
});

afterAll(async () => {
  if (canMount) {
    await client.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
  }
  killLeftovers();
  home.remove();
  runtime.remove();
});

describe.skipIf(!canMount)('a full disk under the data dir', () => {
  it('an activation whose pins cannot be written fails with STORAGE_FAILED and a storage.warning; once there is space it activates and pins', async () => {
    await registerScenario(client, 'pinless', []);
    fillDisk();
    const warned = log.next((e) => e.type === 'storage.warning' && e.file.includes('tool-pins'));
    const state = (await activate(client, 'pinless')).connection;
    expect(state).toMatchObject({ status: 'failed', code: 'STORAGE_FAILED', message: expect.stringContaining('could not write the tool pins') });
    expect(await warned).toMatchObject({ type: 'storage.warning', problem: expect.stringContaining('could not write the tool pins') });
    expect((await client.call('tools.list', {})).tools.filter((t) => t.serviceName === 'pinless')).toEqual([]);

    rmSync(filler());
    expect((await activate(client, 'pinless')).connection.status).toBe('active');
    expect((await client.call('tools.list', {})).tools.filter((t) => t.serviceName === 'pinless').map((t) => t.pin)).toEqual(['trusted', 'trusted']);
    await client.call('services.disable', { name: 'pinless' });
  });

  it('an approved call whose audit record cannot be written is refused before it runs; with space again calls run and are on record', async () => {
    await registerScenario(client, 'counter', ['--call-tools']);
    const service = await activate(client, 'counter');
    expect(service.connection.status).toBe('active');
    fillDisk();
    const warned = log.next((e) => e.type === 'storage.warning' && e.file.endsWith('audit.jsonl'));
    const refused = await approvedCall(service, 'count');
    expect(refused).toEqual({ ok: false, code: 'STORAGE_FAILED', message: expect.stringContaining('the call was not sent') });
    expect(await warned).toMatchObject({ problem: expect.stringContaining('tool calls are refused until it can be written') });
    // Refused again while the disk stays full: nothing reached the server.
    expect(await approvedCall(service, 'count')).toMatchObject({ ok: false, code: 'STORAGE_FAILED' });
    expect((await client.call('services.logs', { name: 'counter' })).stderr).not.toContain('count called');

    rmSync(filler());
    // The first call the server ever ran: the refused ones never reached it.
    expect(await approvedCall(service, 'count')).toEqual({ ok: true, text: '1' });
    const records = readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{') && line.endsWith('}'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.filter((r) => r.record === 'tool.call' && r.service === 'counter').map((r) => r.outcome)).toEqual(expect.arrayContaining(['started', 'ok']));
  });
});
