import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { activate, EventLog } from '../helpers/services.js';
import { asOrdinaryUser, callApproved, describeSandbox, hostileServer, NO_SANDBOX } from '../helpers/sandbox.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 34: a server that, activated, tries to reach what it was not granted. Every attack
// fails sandboxed and works with the sandbox off: the same fixture, the same calls.

const root = tempDir('wisp-sbx-');
const home = path.join(root.path, 'home');
const work = path.join(root.path, 'work');
const canary = `CANARY-${Math.random().toString(36).slice(2)}`;
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let log: EventLog;
let boxed: Service;
let open: Service;
let bystander: Service;
let loopback: net.Server;
let port: number;
let pty: { child: ChildProcess; tty: string; received: () => string } | undefined;

/** A pseudo-terminal of the user's (as a terminal they work in would be), held by python3: its name, and what was typed into it. */
function openPty(wrap: string[]): Promise<{ child: ChildProcess; tty: string; received: () => string }> {
  const script = 'import os,pty,tty,sys,select\nm,s=pty.openpty()\ntty.setraw(s)\nprint(os.ttyname(s),flush=True)\nwhile True:\n  r,_,_=select.select([s,0],[],[])\n  if 0 in r and not os.read(0,1): break\n  if s in r: print("GOT",os.read(s,16).hex(),flush=True)';
  const argv = [...wrap, '/usr/bin/python3', '-c', script];
  const child = spawn(argv[0] ?? '', argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const first = out.split('\n')[0];
      if (out.includes('\n') && first !== undefined) resolve({ child, tty: first.trim(), received: () => out });
    });
  });
}

const call = (service: Service, tool: string, args: Record<string, unknown> = {}): Promise<string> => callApproved(asker, human, log, service, tool, args);

describeSandbox('a hostile server in the sandbox (issue 34)', () => {
  beforeAll(async () => {
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    mkdirSync(path.join(home, '.aws'), { recursive: true });
    mkdirSync(work);
    writeFileSync(path.join(home, '.ssh', 'id_canary'), `${canary}-ssh\n`);
    writeFileSync(path.join(home, '.aws', 'credentials'), `${canary}-aws\n`);
    const wrap = asOrdinaryUser(root.path, home, path.join(home, '.ssh'), path.join(home, '.aws'), path.join(home, '.ssh', 'id_canary'), path.join(home, '.aws', 'credentials'), work);
    daemon = await startWispd(path.join(root.path, 'data'), { wrap, env: daemonEnv({ HOME: home }) });
    asker = await daemon.connect();
    human = await daemon.connect();
    log = await EventLog.follow(human);
    const register = async (name: string, extra: Record<string, unknown>): Promise<Service> =>
      (await asker.call('services.register', { name, command: process.execPath, args: [hostileServer, 'escape'], cwd: work, timeoutMs: 120_000, ...extra })).service;
    boxed = await register('boxed', {});
    open = await register('open', { sandbox: NO_SANDBOX });
    bystander = await register('bystander', {});
    for (const name of ['boxed', 'open', 'bystander']) expect((await activate(asker, name)).connection.status).toBe('active');
    loopback = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    port = (loopback.address() as net.AddressInfo).port;
    if (existsSync('/usr/bin/python3')) pty = await openPty(wrap);
  });

  afterAll(async () => {
    pty?.child.stdin?.end();
    loopback.close();
    await asker.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
    killLeftovers();
    root.remove();
  });

  it('shows the sandbox and its grants; the open one says it is off', () => {
    expect(boxed.sandbox).toEqual({ status: 'on', read: [], write: [], net: { mode: 'none' } });
    expect(open.sandbox).toEqual({ status: 'off' });
  });

  it('cannot read the canaries in the real ~/.ssh and ~/.aws: its home is its own, and empty', async () => {
    expect(await call(boxed, 'read', { path: path.join(home, '.ssh', 'id_canary') })).toBe('BLOCKED: ENOENT');
    expect(await call(boxed, 'read', { path: path.join(home, '.aws', 'credentials') })).toBe('BLOCKED: ENOENT');
    expect(await call(boxed, 'list', { path: home })).toBe('OK: ');
    expect(await call(open, 'read', { path: path.join(home, '.ssh', 'id_canary') })).toBe(`OK: ${canary}-ssh\n`);
    expect(await call(open, 'read', { path: path.join(home, '.aws', 'credentials') })).toBe(`OK: ${canary}-aws\n`);
  });

  it('cannot read Wisp\'s data dir or its registry', async () => {
    expect(await call(boxed, 'list', { path: daemon.dataDir })).toBe('BLOCKED: ENOENT');
    expect(await call(boxed, 'read', { path: path.join(daemon.dataDir, 'mcp-servers.json') })).toBe('BLOCKED: ENOENT');
    expect(await call(open, 'read', { path: path.join(daemon.dataDir, 'mcp-servers.json') })).toMatch(/^OK: \{/);
  });

  it('cannot connect to the control socket', async () => {
    expect(await call(boxed, 'unix', { path: daemon.socket })).toBe('BLOCKED: ENOENT');
    expect(await call(open, 'unix', { path: daemon.socket })).toBe('OK: connected');
  });

  it('cannot read the daemon\'s environment in /proc, nor signal it: its pid namespace has neither', async () => {
    expect(await call(boxed, 'environ', { pid: daemon.pid })).toBe('BLOCKED: ENOENT');
    expect(await call(boxed, 'signal', { pid: daemon.pid })).toBe('BLOCKED: ESRCH');
    expect(await call(open, 'environ', { pid: daemon.pid })).toMatch(/^OK: .*PATH=/);
    expect(await call(open, 'signal', { pid: daemon.pid })).toBe(`OK: could signal ${daemon.pid}`);
  });

  it('cannot write outside its grants: the repository is read-only, and what it writes in "home" stays in its private one', async () => {
    const outside = path.join(home, 'planted');
    expect(await call(boxed, 'write', { path: outside })).toBe(`OK: wrote ${outside}`);
    expect(existsSync(outside)).toBe(false);
    expect(await call(boxed, 'write', { path: hostileServer })).toBe('BLOCKED: EROFS');
    expect(await call(boxed, 'write', { path: path.join(daemon.dataDir, 'planted') })).toBe('BLOCKED: ENOENT');
    // Its cwd is granted read-write.
    expect(await call(boxed, 'write', { path: path.join(work, 'out.txt'), text: 'ok' })).toBe(`OK: wrote ${path.join(work, 'out.txt')}`);
    expect(readFileSync(path.join(work, 'out.txt'), 'utf8')).toBe('ok');
    expect(await call(open, 'write', { path: outside })).toBe(`OK: wrote ${outside}`);
    expect(existsSync(outside)).toBe(true);
  });

  it('cannot connect to a loopback port of the host: its network is its own loopback', async () => {
    expect(await call(boxed, 'tcp', { host: '127.0.0.1', port })).toBe('BLOCKED: ECONNREFUSED');
    expect(await call(open, 'tcp', { host: '127.0.0.1', port })).toBe('OK: connected');
  });

  it.runIf(existsSync('/usr/bin/python3'))('cannot push a byte into a terminal of the user\'s (TIOCSTI): it has no controlling terminal and sees no host terminal', async () => {
    const tty = pty?.tty ?? '';
    expect(await call(boxed, 'tiocsti', { tty })).toMatch(/^BLOCKED: .*(No such file|ENOENT)/);
    expect(await call(boxed, 'tiocsti', { tty: '/dev/tty' })).toMatch(/^BLOCKED: .*(No such device|ENXIO)/);
    expect(pty?.received()).not.toContain('GOT');
    expect(await call(open, 'tiocsti', { tty })).toBe('OK: pushed a byte');
    await expect.poll(() => pty?.received()).toContain('GOT 21');
  });

  it('cannot fork without end: the sandbox holds at most 512 tasks', async () => {
    expect(await call(boxed, 'forks', { count: 600 })).toMatch(/^BLOCKED: started [0-9]+ of 600$/);
    expect(await call(open, 'forks', { count: 600 })).toBe('OK: started 600');
  }, 240_000);

  it('leaves the daemon and the other services as they were', async () => {
    expect((await asker.call('daemon.status')).pid).toBe(daemon.pid);
    const { service } = await asker.call('services.get', { id: bystander.id });
    expect(service.connection).toMatchObject({ status: 'active' });
    expect(JSON.parse((await call(bystander, 'whoami')).slice(4))).toMatchObject({ cwd: work, home, hostname: 'wisp-sandbox' });
    expect((await asker.call('services.get', { id: boxed.id })).service.connection.status).toBe('active');
  });
});
