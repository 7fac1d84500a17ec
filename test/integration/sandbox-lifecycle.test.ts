import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { activate, registerScenario, scenarioServer } from '../helpers/services.js';
import { descendants, describeSandbox } from '../helpers/sandbox.js';
import { isRunning, killLeftovers, runWispctl, startWispd, tempDir } from '../helpers/wispd.js';

// Issue 34: a sandboxed server ends with everything it started (the stop ladder, a kill -9
// of the daemon), a sandbox that cannot be had fails with SANDBOX_UNAVAILABLE and runs
// nothing, and a service registered before sandboxes keeps running as it did until turned on.

const home = tempDir('wisp-sbl-');
afterAll(() => {
  killLeftovers();
  home.remove();
});

const comm = (pid: number): string => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
const storedServices = (dataDir: string): Record<string, unknown>[] => (JSON.parse(readFileSync(path.join(dataDir, 'mcp-servers.json'), 'utf8')) as { services: Record<string, unknown>[] }).services;

describeSandbox('a sandboxed server\'s processes (issue 34)', () => {
  it('runs the server in bwrap, and the stop ladder ends it and its grandchild, though it ignores stdin EOF and SIGTERM', async () => {
    const daemon = await startWispd(path.join(home.path, 'ladder'), { args: ['--stop-grace-ms', '200'] });
    const client = await daemon.connect();
    await registerScenario(client, 'stubborn', ['--ignore-signals', '--grandchild']);
    const service = await activate(client, 'stubborn');
    const pid = service.connection.status === 'active' ? (service.connection.pid ?? 0) : 0;
    expect(comm(pid)).toBe('bwrap');
    await expect.poll(() => descendants(pid).length).toBeGreaterThanOrEqual(3);
    const inside = descendants(pid);
    expect(inside.map(comm)).toEqual(expect.arrayContaining(['node']));
    // The server itself, as the kernel shows it: namespaces of its own (the network's too:
    // this one has none), a session of its own (no terminal), no capabilities, no new privileges.
    const server = inside.find((p) => comm(p) === 'node') ?? 0;
    for (const kind of ['user', 'pid', 'net', 'ipc', 'uts', 'mnt', 'cgroup']) expect(readlinkSync(`/proc/${server}/ns/${kind}`), kind).not.toBe(readlinkSync(`/proc/self/ns/${kind}`));
    const status = readFileSync(`/proc/${server}/status`, 'utf8');
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(status, set).toMatch(new RegExp(`^${set}:\\s+0+$`, 'm'));
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    const session = (p: number | 'self'): string => {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3] ?? '';
    };
    expect(session(server)).not.toBe(session(daemon.pid));
    await client.call('services.disable', { id: service.id });
    for (const p of [pid, ...inside]) expect(isRunning(p), `${p} still runs`).toBe(false);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('leaves nothing running after a kill -9 of the daemon', async () => {
    const daemon = await startWispd(path.join(home.path, 'killed'));
    const client = await daemon.connect();
    await registerScenario(client, 'stubborn', ['--ignore-signals', '--grandchild']);
    expect((await activate(client, 'stubborn')).connection.status).toBe('active');
    await expect.poll(() => descendants(daemon.pid).length).toBeGreaterThanOrEqual(4);
    const all = descendants(daemon.pid);
    daemon.child.kill('SIGKILL');
    await daemon.exited;
    // --die-with-parent takes bwrap; its pid namespace takes everything in it.
    await expect.poll(() => all.filter(isRunning), { timeout: 10_000 }).toEqual([]);
  });
});

describeSandbox('where the sandbox cannot be had (issue 34)', () => {
  it('fails a sandboxed service with SANDBOX_UNAVAILABLE and starts nothing; turned off, it runs', async () => {
    // bwrap hidden from this daemon: an empty, non-executable file over it in a mount namespace of its own.
    const empty = path.join(home.path, 'no-bwrap');
    writeFileSync(empty, '', { mode: 0o644 });
    const wrap = ['unshare', '-r', '-m', 'sh', '-c', 'mount --bind "$0" /usr/bin/bwrap && exec "$@"', empty];
    const daemon = await startWispd(path.join(home.path, 'unavailable'), { wrap });
    const client = await daemon.connect();
    const registered = await registerScenario(client, 'boxed');
    const plan = await client.call('services.sandboxPlan', { id: registered.id });
    expect(plan.plan).toMatchObject({ available: false, reason: expect.stringContaining('bwrap (bubblewrap) was not found in /usr/bin, /bin, /usr/local/bin') });
    const failed = await activate(client, 'boxed');
    expect(failed.connection).toMatchObject({ status: 'failed', code: 'SANDBOX_UNAVAILABLE' });
    const failure = failed.connection.status === 'failed' ? failed.connection.message : '';
    expect(failure).toContain('boxed is sandboxed, and the sandbox cannot be had here');
    expect(failure).toContain('apt-get install bubblewrap');
    expect(failure).toContain('wispctl mcp sandbox boxed --off');
    expect(descendants(daemon.pid)).toEqual([]);
    // Off, by an explicit edit: it runs as you, unsandboxed.
    await client.call('services.update', { id: registered.id, set: { sandbox: { enabled: false, read: [], write: [], net: { mode: 'none' } } } });
    const off = await activate(client, 'boxed');
    expect(off.sandbox).toEqual({ status: 'off' });
    expect(comm(off.connection.status === 'active' ? (off.connection.pid ?? 0) : 0)).toBe('node');
    await client.call('daemon.shutdown');
    await daemon.exited;
  });
});

describeSandbox('a service registered before sandboxes (issue 34)', () => {
  it('keeps running unsandboxed, shown as legacy, until turned on; nothing else of it changes', async () => {
    const dataDir = path.join(home.path, 'legacy');
    const before = {
      id: '11111111-2222-4333-8444-555555555555',
      name: 'old',
      command: process.execPath,
      args: [scenarioServer],
      cwd: null,
      timeoutMs: null,
      env: [],
      enabled: false,
      configVersion: 3,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-02T00:00:00.000Z',
    };
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(path.join(dataDir, 'mcp-servers.json'), `${JSON.stringify({ schemaVersion: 1, services: [before] }, null, 2)}\n`, { mode: 0o600 });
    const daemon = await startWispd(dataDir);
    const client = await daemon.connect();
    const legacy = (await client.call('services.get', { name: 'old' })).service;
    expect(legacy.sandbox).toEqual({ status: 'legacy' });
    expect(legacy.configVersion).toBe(3);
    expect((await client.call('services.sandboxPlan', { name: 'old' })).plan).toBeNull();
    // What a user sees of it: not sandboxed, and how to turn it on (the list, show, the trust prompt).
    const ctl = (args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);
    const list = await ctl(['mcp', 'list']);
    expect(list.stdout).toMatch(/old .*not sandboxed/);
    const show = await ctl(['mcp', 'show', 'old']);
    expect(show.stdout).toContain('not sandboxed (registered before sandboxes existed) — turn it on with: wispctl mcp sandbox old --on');
    // Asked without a terminal to answer: shown, refused, nothing started.
    const asked = await ctl(['mcp', 'activate', 'old']);
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).toContain('old will run as you, with your permissions: it is not sandboxed (registered before sandboxes existed; turn it on with: wispctl mcp sandbox old --on)');
    const running = await activate(client, 'old');
    expect(comm(running.connection.status === 'active' ? (running.connection.pid ?? 0) : 0)).toBe('node');
    // Loading and running it rewrote nothing.
    expect(storedServices(dataDir)[0]).toEqual(before);
    // Turned on: a new configVersion, disabled, everything else as it was; it then runs in bwrap.
    const on = (await client.call('services.update', { name: 'old', set: { sandbox: { enabled: true, read: [], write: [], net: { mode: 'none' } } } })).service;
    expect(on).toMatchObject({ sandbox: { status: 'on' }, configVersion: 4, enabled: false });
    const stored = storedServices(dataDir)[0];
    expect(stored).toEqual({ ...before, configVersion: 4, updatedAt: stored?.updatedAt, sandbox: { enabled: true, read: [], write: [], net: { mode: 'none' } } });
    const boxed = await activate(client, 'old');
    expect(comm(boxed.connection.status === 'active' ? (boxed.connection.pid ?? 0) : 0)).toBe('bwrap');
    await client.call('daemon.shutdown');
    await daemon.exited;
  });
});
