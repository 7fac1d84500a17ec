import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { activate, EventLog, pidOf } from '../helpers/services.js';
import { isRunning, perTestHomes, repoRoot, startWispd } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { until } from '../helpers/wait.js';

const home = perTestHomes(afterEach);
const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');

/** Waits until `pid` is gone or a zombie; fails, naming it, if it never goes. */
async function gone(pid: number): Promise<boolean> {
  await until(`process ${pid} to end`, () => isRunning(pid), (running) => !running, { show: () => 'still running' });
  return true;
}

async function stderrPid(client: WispClient, name: string, label: string): Promise<number> {
  const { stderr } = await client.call('services.logs', { name });
  const pid = Number(new RegExp(`${label} pid (\\d+)`).exec(stderr)?.[1]);
  expect(pid).toBeGreaterThan(1);
  return pid;
}

// These are the truths of an unsandboxed server's process group (the pids its children
// report, crash records): a sandboxed one's pid namespace ends with it (sandbox-lifecycle.test.ts).
describe('process truths', () => {
  it('fails a service as soon as its leader exits while a child holds its pipes, and sweeps the group', async () => {
    const daemon = await startWispd(home(), { args: ['--stop-grace-ms', '300'] });
    const client = await daemon.connect();
    const log = await EventLog.follow(client);
    const { service } = await client.call('services.register', { name: 'leader', command: process.execPath, args: [hostileServer, 'leader-exits'], sandbox: NO_SANDBOX });
    const leader = pidOf(await activate(client, 'leader'));
    const child = await stderrPid(client, 'leader', 'child');
    expect(isRunning(child)).toBe(true);

    const failed = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    const killedAt = Date.now();
    process.kill(leader, 'SIGKILL');
    expect(await failed).toMatchObject({ connection: { code: 'SERVER_EXITED', message: expect.stringContaining('killed by SIGKILL') } });
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect((await client.call('tools.list', { serviceId: service.id })).tools).toEqual([]);
    // The child ignored SIGTERM and held stdin/stdout: the sweep took it down all the same.
    expect(await gone(child)).toBe(true);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('fails a call in flight with SERVER_EXITED when the leader exits mid-call with a child holding the pipes', async () => {
    const daemon = await startWispd(home(), { args: ['--stop-grace-ms', '300'] });
    const client = await daemon.connect();
    const log = await EventLog.follow(client);
    const { service } = await client.call('services.register', { name: 'midcall', command: process.execPath, args: [hostileServer, 'leader-exits', '--exit-mid-call'], sandbox: NO_SANDBOX });
    await activate(client, 'midcall');
    const child = await stderrPid(client, 'midcall', 'child');
    const asked = log.next((e) => e.type === 'approval.requested') as Promise<Extract<WispEvent, { type: 'approval.requested' }>>;
    const call = client.call('tools.call', { serviceId: service.id, toolName: 'exit_leader', arguments: {} });
    call.catch(() => undefined);
    await client.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
    await expect(call).rejects.toMatchObject({ code: 'SERVER_EXITED' });
    expect((await client.call('services.get', { id: service.id })).service.connection).toMatchObject({ status: 'failed', code: 'SERVER_EXITED' });
    expect(await gone(child)).toBe(true);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('after kill -9 of the daemon, the next start stops a server that ignores stdin EOF and SIGTERM, and says so', async () => {
    const dataDir = home();
    const first = await startWispd(dataDir, { args: ['--stop-grace-ms', '300'] });
    const c1 = await first.connect();
    const { service } = await c1.call('services.register', { name: 'stubborn', command: process.execPath, args: [hostileServer, 'stubborn'], sandbox: NO_SANDBOX });
    const id = service.id;
    const leader = pidOf(await activate(c1, 'stubborn'));
    const grandchild = await stderrPid(c1, 'stubborn', 'child');
    // The record is written once the server's start time is read: wait for the file to name it.
    const records = `${first.socket}.servers.json`;
    const recorded = (): string => (existsSync(records) ? readFileSync(records, 'utf8') : '(no file)');
    await until(`${records} to name group ${leader}`, recorded, (text) => text.includes(`"pgid": ${leader}`));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isRunning(leader)).toBe(true);
    expect(isRunning(grandchild)).toBe(true);

    const second = await startWispd(dataDir, { args: ['--stop-grace-ms', '300'] });
    expect(await gone(leader)).toBe(true);
    expect(await gone(grandchild)).toBe(true);
    const c2 = await second.connect();
    const log = new Promise<WispEvent>((resolve) => c2.onEvent((e) => e.type === 'daemon.recovered' && resolve(e)));
    await c2.call('events.subscribe', { since: 0 });
    expect(await log).toMatchObject({ type: 'daemon.recovered', servers: [{ serviceId: id, name: 'stubborn', pid: leader, outcome: 'stopped' }] });
    expect(second.output()).toContain('stopped the ones still running');
    await c2.call('daemon.shutdown');
    await second.exited;
  });

  it('records a running server\'s group and start time beside the socket, and drops the record once it stopped cleanly', async () => {
    const daemon = await startWispd(home(), { args: ['--stop-grace-ms', '300'] });
    const client = await daemon.connect();
    const records = `${daemon.socket}.servers.json`;
    await client.call('services.register', { name: 'plain', command: process.execPath, args: [hostileServer, 'echo'] });
    const pid = pidOf(await activate(client, 'plain'));
    await until(`${records} to be written`, () => existsSync(records));
    const recorded = JSON.parse(readFileSync(records, 'utf8')) as { servers: { name: string; pgid: number; startTime: string }[] };
    expect(recorded.servers).toEqual([{ serviceId: expect.any(String), name: 'plain', pgid: pid, startTime: expect.stringMatching(/\S/) }]);
    expect(statSync(records).mode & 0o777).toBe(0o600);
    await client.call('services.disable', { name: 'plain' });
    await until(`${records} to be removed`, () => existsSync(records), (exists) => !exists, { show: (exists) => (exists ? readFileSync(records, 'utf8') : 'gone') });
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('never signals a recorded pid that now belongs to another process', async () => {
    const dataDir = home();
    const run = path.join(dataDir, 'run');
    mkdirSync(run, { mode: 0o700 });
    // An unrelated process in a group of its own, recorded with a start time that is not its own (a reused pid).
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { detached: true, stdio: 'ignore' });
    const pid = bystander.pid ?? 0;
    try {
      writeFileSync(
        path.join(run, 'wispd.sock.servers.json'),
        JSON.stringify({ schemaVersion: 1, servers: [{ serviceId: 'svc_x', name: 'old', pgid: pid, startTime: 'another-boot:1' }] }),
        { mode: 0o600 },
      );
      const daemon = await startWispd(dataDir);
      const client = await daemon.connect();
      const recovered = new Promise<WispEvent>((resolve) => client.onEvent((e) => e.type === 'daemon.recovered' && resolve(e)));
      await client.call('events.subscribe', { since: 0 });
      expect(await recovered).toMatchObject({ servers: [{ name: 'old', pid, outcome: 'not_ours' }] });
      expect(isRunning(pid)).toBe(true);
      await client.call('daemon.shutdown');
      await daemon.exited;
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('starts over a lock that names a live but unrelated pid (pid reuse), with or without a start time', async () => {
    const dataDir = home();
    mkdirSync(dataDir, { recursive: true });
    const lock = path.join(dataDir, 'wispd.lock');
    writeFileSync(lock, JSON.stringify({ pid: 1, startTime: 'an-old-boot:12345', socket: '/nonexistent/wispd.sock', token: 'old' }), { mode: 0o600 });
    const first = await startWispd(dataDir);
    const c1 = await first.connect();
    expect((await c1.call('daemon.status')).pid).toBe(first.pid);
    first.child.kill('SIGKILL');
    await first.exited;
    // An older lock without a start time, naming this test runner (alive, and not a daemon).
    writeFileSync(lock, JSON.stringify({ pid: process.pid, socket: path.join(dataDir, 'run', 'wispd.sock'), token: 'old' }), { mode: 0o600 });
    const second = await startWispd(dataDir);
    const c2 = await second.connect();
    expect((await c2.call('daemon.status')).pid).toBe(second.pid);
    await c2.call('daemon.shutdown');
    await second.exited;
  });
});
