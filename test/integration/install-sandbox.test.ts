import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Result } from '../../src/core/index.js';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { descendants, describeSandbox } from '../helpers/sandbox.js';
import { EventLog } from '../helpers/services.js';
import { shown, until } from '../helpers/wait.js';
import { isRunning, killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Each test runs real installs (a lock and npm ci, sandboxed): on a loaded 2-CPU machine one took over
// the 30 s default, and the install it left running then failed the next two (.ci/run, FLAKY).
vi.setConfig({ testTimeout: 180_000 });

/**
 * Issue 34, installs: every npm the daemon runs is contained. Real npm 12, real bubblewrap,
 * the fixture registry on 127.0.0.1 (granted by address:port, from the install settings'
 * registry URL) and a second host on 127.0.0.2 that is never granted.
 */

type Plan = Result<'installs.plan'>['plan'];

const home = tempDir('wisp-insb-');
const realHome = process.env.HOME ?? home.path;
const canary = path.join(realHome, '.ssh', `wisp-install-canary-${process.pid}`);
let npm12Bin: string;
let registry: LocalRegistry;
let elsewhere: LocalRegistry;
let stuck: LocalRegistry;
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;

beforeAll(async () => {
  npm12Bin = await ensureNpm12();
  [registry, elsewhere, stuck] = await Promise.all([LocalRegistry.start(), LocalRegistry.start('127.0.0.2'), LocalRegistry.start()]);
  stuck.hang = true;
  const hello = readFileSync(path.join(repoRoot, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
  await Promise.all([
    registry.publish({ name: 'greeting-lib', version: '1.4.0', files: { 'index.js': 'exports.greet = (name) => `HELLO ${name}`;\n' } }),
    registry.publish({ name: 'hello-mcp', version: '1.0.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': hello } }),
    // The hostile registry entry: its packument sends npm to another host.
    ...['1.0.0', '1.0.1'].map((version) => elsewhere.publish({ name: 'redirected-mcp', version, bin: { 'redirected-mcp': 'cli.js' } })),
  ]);
  registry.redirects.set('/redirected-mcp', `${elsewhere.url}redirected-mcp`);
  mkdirSync(path.dirname(canary), { recursive: true });
  writeFileSync(canary, 'the user\'s secret');
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 120_000 });
}, NPM12_SETUP_MS + 60_000);

afterAll(async () => {
  await client.close();
  killLeftovers();
  await Promise.all([registry, elsewhere, stuck].map((r) => r.close()));
  home.remove();
  if (existsSync(canary)) writeFileSync(canary, '');
});

const plan = async (pkg: string, version: string, bin: string, on = client): Promise<Plan> => (await on.call('installs.plan', { package: pkg, version, bin, args: [] })).plan;

/** Starts the plan's install and approves it from the same client (any attached client may answer). */
async function install(planned: Plan, on = client, events = log): Promise<Result<'installs.start'>> {
  const asked = events.next((e) => e.type === 'approval.requested' && e.approval.kind === 'install');
  const started = on.call('installs.start', { planDigest: planned.digest });
  started.catch(() => undefined);
  const event = await asked;
  if (event.type !== 'approval.requested') throw new Error('unreachable');
  await on.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  return started;
}

function npmPid(digest: string, events = log): Promise<number> {
  return events.waitFor((e) => e.type === 'install.progress' && e.install.digest === digest && e.pid !== null).then((e) => (e.type === 'install.progress' && e.pid !== null ? e.pid : 0));
}

const namespace = (pid: number | 'self', kind: string): string => readlinkSync(`/proc/${pid}/ns/${kind}`);

describeSandbox('installs run npm sandboxed (issue 34)', () => {
  it('npm runs in bubblewrap, in namespaces of its own, and sees the install directory but not your home or Wisp\'s data dir', async () => {
    await client.call('installs.setSettings', { registry: stuck.url });
    let planned: Plan | undefined;
    try {
      planned = await plan('hello-mcp', '1.0.0', 'hello-mcp');
      const pid = npmPid(planned.digest);
      const running = install(planned);
      running.catch(() => undefined);
      const bwrap = await pid;
      const { digest } = planned;
      expect(readlinkSync(`/proc/${bwrap}/exe`)).toMatch(/\/bwrap$/);
      // npm itself, inside: waiting on the registry that never answers. The process that runs
      // npm-cli.js (argv[1]), not bwrap or the bridge whose arguments name it. npm sets
      // process.title ("npm install"), which overwrites its command line in /proc: that is npm too.
      const commandLine = (p: number): string[] => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        } catch {
          return ['(gone)'];
        }
      };
      const isNpm = (argv: string[]): boolean => argv[1]?.endsWith('npm-cli.js') === true || /^npm\b/.test(argv[0] ?? '');
      // What a miss shows: the tree below bwrap, each process with its command line, and where the attempt is.
      const look = async (): Promise<{ npm: number; tree: string[]; attempt: unknown }> => {
        const tree = descendants(bwrap).map((p) => ({ p, argv: commandLine(p) }));
        const attempt = await client.call('installs.get', { digest }).then(({ attempt: a }) => ({ status: a.status, step: a.step, log: a.logTail.slice(-300) }), (e: unknown) => String(e));
        return { npm: tree.find(({ argv }) => isNpm(argv))?.p ?? 0, tree: tree.map(({ p, argv }) => `${p}: ${argv.join(' ').slice(0, 160)}`), attempt };
      };
      const history: string[] = [];
      const { npm } = await until(`npm-cli.js below bwrap ${bwrap}`, async () => {
        const seen = await look();
        const line = shown(seen, 1500);
        if (history.at(-1) !== line) history.push(line);
        return seen;
      }, (seen) => seen.npm > 0, { deadlineMs: 120_000, everyMs: 50, show: () => history.slice(0, 8).join('\n then ') });
      for (const kind of ['user', 'pid', 'net', 'ipc', 'uts', 'mnt']) expect(namespace(npm, kind), kind).not.toBe(namespace('self', kind));
      // Its root, as the kernel shows it to us: the install directory is there, your home and the daemon's files are not.
      const seen = (file: string): boolean => existsSync(path.join(`/proc/${npm}/root`, file));
      expect(seen(path.join(planned.directory, 'package.json'))).toBe(true);
      expect(existsSync(canary)).toBe(true);
      expect(seen(canary)).toBe(false);
      expect(seen(realHome)).toBe(false);
      expect(seen(path.join(daemon.dataDir, 'settings.json'))).toBe(false);
      expect(seen(path.join(daemon.dataDir, 'mcp-installs', `${planned.digest}.json`))).toBe(false);
      expect(seen(daemon.socket)).toBe(false);
      expect(await client.call('installs.cancel', { digest: planned.digest })).toEqual({ cancelled: true });
      await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
      expect(isRunning(bwrap)).toBe(false);
      expect(isRunning(npm)).toBe(false);
    } finally {
      // A failure above must not leave this install running into the next test's.
      if (planned !== undefined) await client.call('installs.cancel', { digest: planned.digest }).catch(() => undefined);
      await client.call('installs.setSettings', { registry: registry.url });
    }
  });

  it('npm reaches only the registry\'s host: an install goes through with nothing refused, every request in the registry\'s log', async () => {
    const before = elsewhere.requests.length;
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp');
    const { attempt } = await install(planned);
    expect(attempt).toMatchObject({ status: 'succeeded' });
    expect(attempt.logTail).not.toContain('wisp sandbox');
    expect(registry.requests).toEqual(expect.arrayContaining(['/hello-mcp', '/greeting-lib', '/hello-mcp/-/hello-mcp-1.0.0.tgz', '/greeting-lib/-/greeting-lib-1.4.0.tgz']));
    expect(elsewhere.requests.length).toBe(before);
  });

  it('a registry that sends npm to another host: sandboxed, that host is never reached and the refusal is in the attempt\'s log; unsandboxed, npm goes there', async () => {
    const planned = await plan('redirected-mcp', '1.0.0', 'redirected-mcp');
    await expect(install(planned)).rejects.toMatchObject({ code: 'INSTALL_FAILED', details: { status: 'failed' } });
    expect(registry.requests).toContain('/redirected-mcp');
    expect(elsewhere.requests).toEqual([]);
    const { attempt } = await client.call('installs.get', { digest: planned.digest });
    expect(attempt).toMatchObject({ status: 'failed', step: 'lock' });
    expect(attempt.logTail).toContain(`wisp sandbox: refused a connection to ${new URL(elsewhere.url).host} (not-granted: only the registry, ${new URL(registry.url).host}, is reachable)`);

    // The same attack with the sandbox turned off (another version: a failed plan is never replayed) reaches the other host.
    await client.call('installs.setSettings', { sandbox: false });
    try {
      const open = await plan('redirected-mcp', '1.0.1', 'redirected-mcp');
      await expect(install(open)).rejects.toMatchObject({ details: { status: 'failed' } });
      expect(elsewhere.requests).toContain('/redirected-mcp');
    } finally {
      await client.call('installs.setSettings', { sandbox: true });
    }
  });

  it('a kill -9 of the daemon takes the sandboxed npm with it; the attempt comes back interrupted', async () => {
    const data = path.join(home.path, 'crash-data');
    const first = await startWispd(data);
    const other = await first.connect();
    const events = await EventLog.follow(other);
    await other.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: stuck.url });
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp', other);
    const pid = npmPid(planned.digest, events);
    install(planned, other, events).catch(() => undefined);
    const bwrap = await pid;
    await expect.poll(() => descendants(bwrap).length, { timeout: 120_000 }).toBeGreaterThan(0);
    const all = [bwrap, ...descendants(bwrap)];
    first.child.kill('SIGKILL');
    await first.exited;
    // --die-with-parent takes bwrap; its pid namespace takes npm.
    await expect.poll(() => all.filter(isRunning), { timeout: 10_000 }).toEqual([]);
    const second = await startWispd(data);
    const again = await second.connect();
    try {
      expect((await again.call('installs.get', { digest: planned.digest })).attempt).toMatchObject({ status: 'interrupted', error: { code: 'INTERRUPTED' } });
    } finally {
      await again.close();
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

describeSandbox('installs where no sandbox can be had (issue 34)', () => {
  it('fail SANDBOX_UNAVAILABLE, run nothing, and say how to get bubblewrap; with the sandbox turned off, npm runs', async () => {
    // bwrap hidden from this daemon: an empty, non-executable file over it in a mount namespace of its own.
    const empty = path.join(home.path, 'no-bwrap');
    writeFileSync(empty, '', { mode: 0o644 });
    const wrap = ['unshare', '-r', '-m', 'sh', '-c', 'mount --bind "$0" /usr/bin/bwrap && exec "$@"', empty];
    const hidden = await startWispd(path.join(home.path, 'unavailable'), { wrap });
    const other = await hidden.connect();
    const events = await EventLog.follow(other);
    try {
      await other.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 120_000 });
      const before = registry.requests.length;
      const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp', other);
      const failed = install(planned, other, events);
      await expect(failed).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE', details: { status: 'failed' } });
      const message = await failed.catch((error: unknown) => (error as Error).message);
      expect(message).toContain('installs run npm in a sandbox, and the sandbox cannot be had here: bwrap (bubblewrap) was not found');
      expect(message).toContain('apt-get install bubblewrap');
      expect(message).toContain('wispctl install settings --no-sandbox');
      expect(registry.requests.length).toBe(before);
      expect(descendants(hidden.pid)).toEqual([]);
      // Turned off, explicitly: npm runs as you (another directory: a failed attempt is never replayed).
      const { attempt } = await other.call('installs.discard', { digest: planned.digest }).then(() => other.call('installs.setSettings', { sandbox: false })).then(() => install(planned, other, events));
      expect(attempt).toMatchObject({ status: 'succeeded' });
    } finally {
      await other.close();
      hidden.child.kill('SIGTERM');
      await hidden.exited;
    }
  });
});
