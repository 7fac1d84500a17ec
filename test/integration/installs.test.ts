import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Result, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { EventLog } from '../helpers/services.js';
import { daemonEnv, isRunning, killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Installs with the REAL npm 12 (installed from the registry on first use: ensureNpm12) against a
 * local registry served from fixtures/npm: every package here is built and published in
 * beforeAll, as real tarballs with real packuments.
 */
let npm12Bin: string;
const home = tempDir();
const marker = path.join(home.path, 'preinstall-ran');
const mock = new MockDeepSeek();
let registry: LocalRegistry;
let stuck: LocalRegistry;
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let humanLog: EventLog;

type Plan = Result<'installs.plan'>['plan'];

beforeAll(async () => {
  npm12Bin = await ensureNpm12();
  registry = await LocalRegistry.start();
  stuck = await LocalRegistry.start();
  stuck.hang = true;
  const hello = readFileSync(path.join(repoRoot, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
  await Promise.all([
    registry.publish({ name: '@fixture/case-lib', version: '2.1.0', files: { 'index.js': 'exports.upper = (s) => s.toUpperCase();\n' } }),
    registry.publish({
      name: 'greeting-lib',
      version: '1.4.0',
      dependencies: { '@fixture/case-lib': '^2.0.0' },
      files: { 'index.js': "const { upper } = require('@fixture/case-lib');\nexports.greet = (name) => `HELLO ${upper(name)}`;\n" },
    }),
    registry.publish({ name: 'hello-mcp', version: '1.0.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': hello } }),
    registry.publish({
      name: 'sneaky-dep',
      version: '1.0.0',
      scripts: { preinstall: `node -e "require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')"` },
      files: { 'index.js': 'module.exports = 1;\n' },
    }),
    registry.publish({ name: 'with-sneaky-dep', version: '1.0.0', dependencies: { 'sneaky-dep': '1.0.0' }, bin: { 'with-sneaky-dep': 'cli.js' } }),
    registry.publish({ name: 'with-git-dep', version: '1.0.0', dependencies: { gitdep: 'git+https://127.0.0.1:9/nowhere/gitdep.git' }, bin: { 'with-git-dep': 'cli.js' } }),
    registry.publish({ name: 'tarball-target', version: '1.0.0', files: { 'index.js': 'module.exports = 2;\n' } }),
    registry.publish({ name: 'shell-bin', version: '1.0.0', bin: { 'shell-bin': 'run.sh' }, files: { 'run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 } } }),
  ]);
  await registry.publish({
    name: 'with-tarball-dep',
    version: '1.0.0',
    dependencies: { 'tarball-target': registry.tarballUrl('tarball-target', '1.0.0') },
    bin: { 'with-tarball-dep': 'cli.js' },
  });
  const modelUrl = await mock.start();
  daemon = await startWispd(path.join(home.path, 'data'), { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-install-test' }) });
  asker = await daemon.connect();
  human = await daemon.connect();
  humanLog = await EventLog.follow(human);
  await asker.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 120_000 });
  await asker.call('model.setSettings', { baseUrl: modelUrl, model: 'mock-model', maxRetries: 0 });
}, NPM12_SETUP_MS + 120_000);

afterAll(async () => {
  await asker.close();
  await human.close();
  killLeftovers();
  await registry.close();
  await stuck.close();
  await mock.stop();
  home.remove();
});

const plan = async (pkg: string, version: string, bin: string, args: string[] = [], client = asker): Promise<Plan> =>
  (await client.call('installs.plan', { package: pkg, version, bin, args })).plan;

/** Starts the plan's install; the human answers its approval with `decision`. */
async function install(planned: Plan, decision: 'approve' | 'deny' = 'approve', client = asker, log = humanLog) {
  const asked = log.next((e) => e.type === 'approval.requested' && e.approval.kind === 'install');
  const started = client.call('installs.start', { planDigest: planned.digest });
  started.catch(() => undefined);
  const event = await asked;
  if (event.type !== 'approval.requested') throw new Error('unreachable');
  expect(event.approval).toMatchObject({ binding: { planDigest: planned.digest }, summary: { arguments: { package: planned.package, version: planned.version, registry: planned.registry, directory: planned.directory } } });
  await (client === asker ? human : client).call('approvals.respond', { id: event.approval.id, decision });
  return started;
}

/** The steps an attempt announced, once its install.finished has reached the human's connection (events arrive in order). */
async function steps(digest: string): Promise<string[]> {
  await humanLog.waitFor((e) => e.type === 'install.finished' && e.attempt.digest === digest);
  return humanLog.events.flatMap((e: WispEvent) => (e.type === 'install.progress' && e.install.digest === digest && e.status === 'started' && e.pid === null ? [e.step] : []));
}

function npmPid(log: EventLog, digest: string): Promise<number> {
  return log
    .waitFor((e) => e.type === 'install.progress' && e.install.digest === digest && e.pid !== null)
    .then((e) => (e.type === 'install.progress' && e.pid !== null ? e.pid : 0));
}

describe('verified npm installs', () => {
  it('plans with the exact version, the registry and the directory, and refuses ranges, tags and URLs', async () => {
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp', ['--verbose']);
    expect(planned).toMatchObject({
      package: 'hello-mcp',
      version: '1.0.0',
      bin: 'hello-mcp',
      args: ['--verbose'],
      registry: registry.url,
      directory: path.join(daemon.dataDir, 'mcp-installs', planned.digest),
      runtime: { npmVersion: expect.stringMatching(/^12\./), nodeVersion: expect.stringMatching(/^v22\./) },
    });
    expect(planned.wont.join('\n')).toContain('install script');
    expect((await plan('hello-mcp', '1.0.0', 'hello-mcp', ['--other'])).digest).not.toBe(planned.digest);
    for (const version of ['^1.0.0', 'latest', '1.x', 'https://example.com/x.tgz', 'git+https://x/y.git', 'file:../x', 'v1.0.0']) {
      await expect(plan('hello-mcp', version, 'hello-mcp'), version).rejects.toMatchObject({ code: 'INVALID_PLAN', details: { field: 'version' } });
    }
    await expect(plan('../hello', '1.0.0', 'hello-mcp')).rejects.toMatchObject({ code: 'INVALID_PLAN', details: { field: 'package' } });
    expect(existsSync(planned.directory)).toBe(false);
  });

  it('installs a package with dependencies, registers it disabled, and the activated server answers a tool call', async () => {
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp');
    const { attempt, service, reused } = await install(planned);
    expect(reused).toBe(false);
    expect(attempt).toMatchObject({ status: 'succeeded', lockedPackages: 3, installScripts: [], serviceId: service.id });
    expect(await steps(planned.digest)).toEqual(['prepare', 'lock', 'verify', 'install', 'check_bin', 'register']);
    expect(service).toMatchObject({
      name: 'hello-mcp',
      enabled: false,
      connection: { status: 'disabled' },
      command: path.join(npm12Bin, 'node'),
      args: [path.join(planned.directory, 'node_modules', 'hello-mcp', 'bin', 'hello.js')],
      cwd: planned.directory,
      origin: { kind: 'install', planDigest: planned.digest, package: 'hello-mcp', version: '1.0.0' },
    });
    expect(existsSync(path.join(planned.directory, '.npmrc'))).toBe(false);

    const active = (await asker.call('services.activate', { id: service.id, configVersion: service.configVersion })).service;
    expect(active.connection).toMatchObject({ status: 'active', toolCount: 1 });
    const asked = humanLog.next((e) => e.type === 'approval.requested' && e.approval.kind === 'tool_call');
    const call = asker.call('tools.call', { serviceId: service.id, toolName: 'greet', arguments: { name: 'wisp' } });
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unreachable');
    await human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    expect((await call).text).toBe('HELLO WISP');
    await asker.call('services.disable', { id: service.id });
  });

  it('installs the same plan again without running npm, and keeps one disabled service', async () => {
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp');
    const requests = registry.requests.length;
    const { attempt, service, reused } = await install(planned);
    expect(reused).toBe(true);
    expect(attempt.status).toBe('succeeded');
    expect(service).toMatchObject({ name: 'hello-mcp', enabled: false });
    expect(registry.requests.length).toBe(requests);
    expect((await asker.call('services.list')).services.filter((s) => s.origin.kind === 'install' && s.origin.planDigest === planned.digest)).toHaveLength(1);
  });

  it('never runs a dependency\'s preinstall script, and reports that it declares one', async () => {
    const planned = await plan('with-sneaky-dep', '1.0.0', 'with-sneaky-dep');
    const { attempt } = await install(planned);
    expect(attempt).toMatchObject({ status: 'succeeded', installScripts: ['sneaky-dep'] });
    expect(existsSync(path.join(planned.directory, 'node_modules', 'sneaky-dep', 'index.js'))).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a git dependency before npm ci', async () => {
    const planned = await plan('with-git-dep', '1.0.0', 'with-git-dep');
    const error = await install(planned).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INSTALL_FAILED', details: { status: 'failed' } });
    expect((error as Error).message).toMatch(/git/i);
    expect(await steps(planned.digest)).not.toContain('install');
    expect(existsSync(path.join(planned.directory, 'node_modules'))).toBe(false);
    const { attempt } = await asker.call('installs.get', { digest: planned.digest });
    expect(attempt).toMatchObject({ status: 'failed', step: 'lock', error: { code: 'INSTALL_FAILED' } });
    expect(attempt.logTail).toMatch(/git/i);
  });

  it('refuses a tarball-URL dependency on the registry host before npm ci, naming the entry', async () => {
    const planned = await plan('with-tarball-dep', '1.0.0', 'with-tarball-dep');
    const error = await install(planned).catch((e: unknown) => e);
    // npm 12 itself refuses it while locking (--allow-remote=none); had it locked it, the
    // verifier would refuse the URL spec (test/unit/install/lockfile-real.test.ts).
    expect(error).toMatchObject({ code: 'INSTALL_FAILED', details: { status: 'failed' } });
    expect((error as Error).message).toContain('tarball-target');
    expect(await steps(planned.digest)).not.toContain('install');
    expect(existsSync(path.join(planned.directory, 'node_modules'))).toBe(false);
    // Never replayed: the same plan is refused until the attempt is discarded.
    await expect(asker.call('installs.start', { planDigest: planned.digest })).rejects.toMatchObject({ code: 'INSTALL_UNFINISHED', details: { directory: planned.directory } });
    // Nor is it shown again as if it could run.
    await expect(plan('with-tarball-dep', '1.0.0', 'with-tarball-dep')).rejects.toMatchObject({ code: 'INSTALL_UNFINISHED', details: { digest: planned.digest } });
    await asker.call('installs.discard', { digest: planned.digest });
    expect(existsSync(planned.directory)).toBe(false);
    await expect(asker.call('installs.get', { digest: planned.digest })).rejects.toMatchObject({ code: 'PLAN_NOT_FOUND' });
  });

  it('refuses a bin that is not JavaScript, and registers nothing', async () => {
    const before = (await asker.call('services.list')).services.length;
    const planned = await plan('shell-bin', '1.0.0', 'shell-bin');
    await expect(install(planned)).rejects.toMatchObject({ code: 'INSTALL_BIN_INVALID', message: expect.stringContaining('not JavaScript') });
    const missing = await plan('hello-mcp', '1.0.0', 'no-such-bin');
    await expect(install(missing)).rejects.toMatchObject({ code: 'INSTALL_BIN_INVALID', message: expect.stringContaining('it has: hello-mcp') });
    expect((await asker.call('services.list')).services.length).toBe(before);
  });

  it('refuses the plan before it is shown when its service would have no room (16 services registered)', async () => {
    const before = (await asker.call('services.list')).services.length;
    const fillers: string[] = [];
    for (let i = before; i < 16; i++) fillers.push((await asker.call('services.register', { name: `filler-${i}`, command: '/usr/bin/true' })).service.id);
    try {
      await expect(plan('hello-mcp', '1.0.0', 'hello-mcp', ['--no-room'])).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
        message: expect.stringContaining('remove one before installing another'),
        details: { limit: 'maxServices', max: 16 },
      });
      expect((await asker.call('approvals.list')).approvals).toEqual([]);
    } finally {
      for (const id of fillers) await asker.call('services.delete', { id });
    }
  });

  it('runs nothing when the human denies the install', async () => {
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp', ['--denied']);
    await expect(install(planned, 'deny')).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    expect(existsSync(planned.directory)).toBe(false);
    await expect(asker.call('installs.get', { digest: planned.digest })).rejects.toMatchObject({ code: 'PLAN_NOT_FOUND' });
  });

  it('cuts a registry that hangs at the time limit, and npm\'s process group is gone', async () => {
    await asker.call('installs.setSettings', { registry: stuck.url, timeoutMs: 3000 });
    try {
      const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp');
      const pid = npmPid(humanLog, planned.digest);
      await expect(install(planned)).rejects.toMatchObject({ code: 'TIMEOUT', details: { status: 'timed_out' } });
      expect(isRunning(await pid)).toBe(false);
      expect((await asker.call('installs.get', { digest: planned.digest })).attempt).toMatchObject({ status: 'timed_out', step: 'lock', npmPid: null });
    } finally {
      await asker.call('installs.setSettings', { registry: registry.url, timeoutMs: 120_000 });
    }
  });

  it('cancels a running install: npm is stopped and the attempt ends cancelled', async () => {
    await asker.call('installs.setSettings', { registry: stuck.url });
    try {
      const planned = await plan('greeting-lib', '1.4.0', 'greet');
      const pid = npmPid(humanLog, planned.digest);
      const running = install(planned);
      running.catch(() => undefined);
      const npm = await pid;
      expect(isRunning(npm)).toBe(true);
      expect(await human.call('installs.cancel', { digest: planned.digest })).toEqual({ cancelled: true });
      await expect(running).rejects.toMatchObject({ code: 'CANCELLED', details: { status: 'cancelled' } });
      expect(isRunning(npm)).toBe(false);
    } finally {
      await asker.call('installs.setSettings', { registry: registry.url });
    }
  });

  it('says NPM_TOO_OLD with this machine\'s npm 11, and RUNTIME_NOT_FOUND with no runtime', async () => {
    await asker.call('installs.setSettings', { runtimeDirs: ['/usr/bin'] });
    try {
      await expect(plan('hello-mcp', '1.0.0', 'hello-mcp')).rejects.toMatchObject({ code: 'NPM_TOO_OLD', message: expect.stringContaining('npm 11') });
      await asker.call('installs.setSettings', { runtimeDirs: [path.join(home.path, 'nothing-here')] });
      await expect(plan('hello-mcp', '1.0.0', 'hello-mcp')).rejects.toMatchObject({ code: 'RUNTIME_NOT_FOUND' });
    } finally {
      await asker.call('installs.setSettings', { runtimeDirs: [npm12Bin] });
    }
  });

  it('asks npm for its built-in default registry when none is configured', async () => {
    await asker.call('installs.setSettings', { registry: null });
    try {
      expect((await plan('hello-mcp', '1.0.0', 'hello-mcp')).registry).toBe('https://registry.npmjs.org/');
    } finally {
      await asker.call('installs.setSettings', { registry: registry.url });
    }
  });
});

describe('the model\'s install tool', () => {
  it('installs with the human\'s approval of the same plan, and tells the model the service is disabled', async () => {
    mock.clear();
    mock.enqueue(
      { events: toolCallEvents([{ id: 'inst', name: 'mcp_install_npm', arguments: JSON.stringify({ package: 'hello-mcp', version: '1.0.0', bin: 'hello-mcp', args: ['--from-model'] }) }]) },
      { events: textEvents('Installed; it is disabled until you activate it.') },
    );
    const { session } = await asker.call('sessions.create', { title: 'install' });
    const asked = humanLog.next((e) => e.type === 'approval.requested' && e.approval.kind === 'install');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'Install hello-mcp 1.0.0 please.' });
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unreachable');
    expect(event.approval).toMatchObject({
      requester: { sessionId: session.id, taskId: task.id },
      summary: { toolName: 'mcp_install_npm', arguments: { package: 'hello-mcp', version: '1.0.0', args: ['--from-model'], registry: registry.url } },
    });
    expect(event.approval.summary.title).toContain('DISABLED');
    await human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    await humanLog.waitFor((e) => e.type === 'task.state' && e.task.id === task.id && e.task.state.status === 'completed');
    const toolMessage = mock.requests.at(-1)?.body.messages?.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'inst' });
    const told = JSON.parse(String(toolMessage?.content)) as { service: { name: string }; state: string; reused: boolean };
    expect(told).toMatchObject({ state: 'disabled', reused: false });
    const { service } = await asker.call('services.get', { name: told.service.name });
    expect(service).toMatchObject({ enabled: false, args: [expect.stringContaining('hello.js'), '--from-model'], origin: { kind: 'install' } });
  });
});

// Sandboxed, npm dies with the daemon (install-sandbox.test.ts); unsandboxed (install settings
// --no-sandbox) it outlives it, and the next start ends it.
describe('an unsandboxed install interrupted by a daemon crash', () => {
  it('comes back interrupted, ends the npm left behind, and refuses to replay it', async () => {
    const data = path.join(home.path, 'crash-data');
    const first = await startWispd(data);
    const client = await first.connect();
    const log = await EventLog.follow(client);
    await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: stuck.url, sandbox: false });
    const planned = await plan('hello-mcp', '1.0.0', 'hello-mcp', [], client);
    const pid = npmPid(log, planned.digest);
    const running = install(planned, 'approve', client, log);
    running.catch(() => undefined);
    const npm = await pid;
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isRunning(npm)).toBe(true);

    const second = await startWispd(data);
    const again = await second.connect();
    try {
      expect(isRunning(npm)).toBe(false);
      const { attempt } = await again.call('installs.get', { digest: planned.digest });
      expect(attempt).toMatchObject({ status: 'interrupted', step: 'lock', error: { code: 'INTERRUPTED' } });
      expect((await again.call('installs.list')).attempts.map((a) => a.status)).toEqual(['interrupted']);
      // Refused before it is shown: a plan whose attempt is unfinished cannot succeed.
      await expect(plan('hello-mcp', '1.0.0', 'hello-mcp', [], again)).rejects.toMatchObject({
        code: 'INSTALL_UNFINISHED',
        message: expect.stringContaining(`wispctl install discard ${planned.digest}`),
        details: { digest: planned.digest },
      });
      await expect(again.call('installs.start', { planDigest: planned.digest })).rejects.toMatchObject({
        code: 'INSTALL_UNFINISHED',
        message: expect.stringContaining(planned.directory),
      });
      expect((await again.call('approvals.list')).approvals).toEqual([]);
    } finally {
      await again.close();
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
