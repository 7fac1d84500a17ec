import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { ConnectionState, Service } from '../../src/core/index.js';
import { activate, EventLog, pidOf, registerScenario, scenarioServer } from '../helpers/services.js';
import { daemonEnv, environOf, isRunning, killLeftovers, onLinux, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
let bystander: Service;

// The daemon has secrets in its own environment: no server may inherit them.
const env = daemonEnv({ DEEPSEEK_API_KEY: 'sk-canary-daemon-key', WISP_MARKER: 'daemon-only' });

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'], env });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await registerScenario(client, 'bystander');
  bystander = await activate(client, 'bystander');
});

afterAll(async () => {
  // The bystander saw every failure below and is still the same healthy connection.
  const { service } = await client.call('services.get', { name: 'bystander' });
  expect(service.connection).toEqual(bystander.connection);
  const pids = log.pids();
  await client.call('daemon.shutdown');
  await daemon.exited;
  // Not one server process outlives the daemon.
  expect(pids.filter(isRunning)).toEqual([]);
  killLeftovers();
  home.remove();
});

function failed(service: Service): Extract<ConnectionState, { status: 'failed' }> {
  expect(service.connection.status).toBe('failed');
  return service.connection as Extract<ConnectionState, { status: 'failed' }>;
}


describe('trust and activation', () => {
  it('activates an echo server: active, tools listed, minimal environment', async () => {
    await registerScenario(client, 'echo');
    const service = await activate(client, 'echo');
    expect(service.connection).toMatchObject({ status: 'active', generation: 1, toolCount: 2, toolListVersion: 1, server: { name: 'scenario-server' } });
    expect(service.enabled).toBe(true);
    const { tools } = await client.call('tools.list', { serviceId: service.id });
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'env']);
    const echo = tools.find((t) => t.name === 'echo');
    expect(echo).toMatchObject({ serviceName: 'echo', annotations: { readOnlyHint: true }, toolListVersion: 1, generation: 1 });
    expect(echo?.modelName).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const status = await client.call('daemon.status');
    expect(status.counts).toMatchObject({ enabledServices: 2, activeTools: 4 });
  });

  it.runIf(onLinux)('gives a server the minimal environment only, none of the daemon\'s (read from /proc)', async () => {
    const service = await activate(client, 'echo');
    const environ = environOf(pidOf(service));
    const names = environ.split('\0').filter(Boolean).map((kv) => kv.split('=')[0]);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n) => ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].includes(n ?? ''))).toBe(true);
    expect(environ).not.toContain('sk-canary-daemon-key');
    expect(environ).not.toContain('daemon-only');
  });

  it('refuses an activation bound to an old configVersion, and starts nothing', async () => {
    const before = await registerScenario(client, 'edited');
    await client.call('services.update', { id: before.id, set: { args: [scenarioServer, '--tools', '1'] } });
    const events = log.events.length;
    await expect(client.call('services.activate', { id: before.id, configVersion: 1 })).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    await client.call('daemon.status');
    expect(log.events.slice(events).filter((e) => e.type === 'service.state')).toEqual([]);
    await client.call('services.delete', { id: before.id });
  });

  it('reports each phase as an event and starts a new generation on every activation', async () => {
    const service = await registerScenario(client, 'phases');
    await activate(client, 'phases');
    const states = log.events.flatMap((e) => (e.type === 'service.state' && e.service.id === service.id ? [e.connection] : []));
    expect(states.map((s) => (s.status === 'activating' ? `activating/${s.phase}` : s.status))).toEqual([
      'activating/spawning',
      'activating/initializing',
      'activating/discovering',
      'active',
    ]);
    await client.call('services.disable', { name: 'phases' });
    const again = await activate(client, 'phases');
    expect(again.connection).toMatchObject({ status: 'active', generation: 2 });
    await client.call('services.delete', { name: 'phases' });
  });

  it('keeps model-facing tool names stable across a daemon restart', async () => {
    const dir = tempDir();
    try {
      const first = await startWispd(dir.path, { args: ['--stop-grace-ms', '100'] });
      const c1 = await first.connect();
      await registerScenario(c1, 'stable', ['--tools', '2']);
      await activate(c1, 'stable');
      const before = (await c1.call('tools.list')).tools.map((t) => [t.name, t.modelName]).sort();
      await c1.call('daemon.shutdown');
      await first.exited;

      const second = await startWispd(dir.path, { args: ['--stop-grace-ms', '100'] });
      const c2 = await second.connect();
      expect((await c2.call('services.get', { name: 'stable' })).service.connection.status).toBe('disabled');
      await activate(c2, 'stable');
      expect((await c2.call('tools.list')).tools.map((t) => [t.name, t.modelName]).sort()).toEqual(before);
      await c2.call('daemon.shutdown');
      await second.exited;
    } finally {
      dir.remove();
    }
  });
});

describe('discovery', () => {
  it('pages through tools/list (3 pages)', async () => {
    await registerScenario(client, 'paging', ['--tools', '5', '--page-size', '3']);
    const service = await activate(client, 'paging');
    expect(service.connection).toMatchObject({ status: 'active', toolCount: 7 });
    await client.call('services.delete', { name: 'paging' });
  });

  it('fails a server that never stops paging', async () => {
    await registerScenario(client, 'forever', ['--pages-forever']);
    const f = failed(await activate(client, 'forever'));
    expect(f.code).toBe('PROTOCOL_ERROR');
    expect(f.message).toContain('still paging after 100 pages');
    expect((await client.call('tools.list', { serviceId: (await client.call('services.get', { name: 'forever' })).service.id })).tools).toEqual([]);
    await client.call('services.delete', { name: 'forever' });
  });

  it('follows tools/list_changed: added and removed tools, a new tool-list version each time', async () => {
    // Signalled from outside: its own pid is the one in the list only unsandboxed (the sandbox is not what this tests).
    const service = await registerScenario(client, 'changing', [], { sandbox: NO_SANDBOX });
    const pid = pidOf(await activate(client, 'changing'));
    const added = log.next((e) => e.type === 'service.tools' && e.service.id === service.id);
    process.kill(pid, 'SIGUSR2');
    expect(await added).toMatchObject({ toolListVersion: 2, toolCount: 3 });
    expect((await client.call('tools.list', { serviceId: service.id })).tools.map((t) => t.name).sort()).toEqual(['changed-1', 'echo', 'env']);

    const removed = log.next((e) => e.type === 'service.tools' && e.service.id === service.id);
    process.kill(pid, 'SIGHUP');
    expect(await removed).toMatchObject({ toolListVersion: 3, toolCount: 2 });
    const tools = (await client.call('tools.list', { serviceId: service.id })).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['changed-1', 'echo']);
    expect(tools.every((t) => t.toolListVersion === 3)).toBe(true);

    const refreshed = await client.call('services.refreshTools', { name: 'changing' });
    expect(refreshed.service.connection).toMatchObject({ status: 'active', toolListVersion: 4, pid });
    await client.call('services.delete', { name: 'changing' });
    expect(isRunning(pid)).toBe(false);
  });

  it('withdraws the tools and fails the service when a refresh fails', async () => {
    const service = await registerScenario(client, 'breaking', [], { sandbox: NO_SANDBOX });
    const pid = pidOf(await activate(client, 'breaking'));
    const failure = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    process.kill(pid, 'SIGUSR1');
    expect(await failure).toMatchObject({ connection: { status: 'failed', code: 'PROTOCOL_ERROR' } });
    expect((await client.call('tools.list', { serviceId: service.id })).tools).toEqual([]);
    await expect(client.call('services.refreshTools', { name: 'breaking' })).rejects.toMatchObject({ code: 'SERVICE_NOT_ACTIVE' });
    await client.call('services.disable', { name: 'breaking' });
    expect(isRunning(pid)).toBe(false);
    await client.call('services.delete', { name: 'breaking' });
  });
});

describe('servers that fail to start', () => {
  it.each([
    // Only this case is about the deadline: the others get the default 10 s, so a loaded
    // machine cannot turn their real failure into a TIMEOUT.
    ['slow initialize', 'TIMEOUT', ['--init-delay', '600000'], 'did not answer within 2000 ms'],
    ['exit during initialize', 'SERVER_EXITED', ['--exit-on-init', '3'], 'exit status 3'],
    ['a 2 MB frame', 'FRAME_TOO_LARGE', ['--huge-description', String(2 * 1024 * 1024)], 'more than 1048576 bytes'],
    ['garbage on stdout', 'PROTOCOL_ERROR', ['--garbage-stdout'], 'something other than JSON-RPC'],
    ['65 tools', 'LIMIT_EXCEEDED', ['--tools', '63'], 'at most 64 per service'],
    ['a 20 KB schema', 'LIMIT_EXCEEDED', ['--schema-bytes', String(20 * 1024)], '"big-schema"'],
    ['an external $ref', 'SCHEMA_INVALID', ['--external-ref'], '"remote-ref"'],
    ['an uncompilable schema', 'SCHEMA_INVALID', ['--bad-schema'], '"bad-schema"'],
  ])('%s ends in failed %s with the process gone', async (name, code, flags, text) => {
    const id = name.replace(/[^a-z0-9]+/gi, '-');
    await registerScenario(client, id, flags, code === 'TIMEOUT' ? { timeoutMs: 2000 } : {});
    const service = await activate(client, id);
    const f = failed(service);
    expect(f.code).toBe(code);
    expect(f.message).toContain(text);
    expect(service.enabled).toBe(false);
    const pids = log.events.flatMap((e) => (e.type === 'service.state' && e.service.id === service.id && 'pid' in e.connection && e.connection.pid !== null ? [e.connection.pid] : []));
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.filter(isRunning)).toEqual([]);
    await client.call('services.delete', { id: service.id });
  });

  it.each([
    ['a bare command not on PATH', 'COMMAND_NOT_FOUND', 'no-such-wisp-command', undefined, 'absolute path'],
    ['an absolute command that does not exist', 'COMMAND_NOT_FOUND', '/nonexistent/wisp/server', undefined, 'does not exist'],
    ['a missing cwd', 'CWD_NOT_FOUND', process.execPath, '/nonexistent/wisp/dir', '/nonexistent/wisp/dir'],
  ])('%s fails with %s', async (name, code, command, cwd, text) => {
    const id = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await client.call('services.register', { name: id, command, args: [scenarioServer], ...(cwd !== undefined ? { cwd } : {}) });
    const f = failed(await activate(client, id));
    expect(f.code).toBe(code);
    expect(f.message).toContain(text);
    await client.call('services.delete', { name: id });
  });

  it('fails a command that is not executable', async () => {
    const script = path.join(home.path, 'not-executable.sh');
    writeFileSync(script, '#!/bin/sh\n');
    chmodSync(script, 0o644);
    await client.call('services.register', { name: 'noexec', command: script });
    expect(failed(await activate(client, 'noexec')).code).toBe('COMMAND_NOT_EXECUTABLE');
    await client.call('services.delete', { name: 'noexec' });
  });

  it('refuses a 97th active tool: the activation fails and nothing it started lasts', async () => {
    await registerScenario(client, 'sixty-four', ['--tools', '62']);
    expect((await activate(client, 'sixty-four')).connection).toMatchObject({ status: 'active', toolCount: 64 });
    const before = (await client.call('daemon.status')).counts.activeTools;
    await registerScenario(client, 'one-too-many', ['--tools', String(96 - before - 1)]);
    const f = failed(await activate(client, 'one-too-many'));
    expect(f).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(f.message).toContain('at most 96 in total');
    expect((await client.call('daemon.status')).counts.activeTools).toBe(before);
    await client.call('services.delete', { name: 'one-too-many' });
    await client.call('services.delete', { name: 'sixty-four' });
  });

  it('accepts a draft-07 schema and a 2020-12 schema', async () => {
    await registerScenario(client, 'dialects', ['--dialects']);
    const service = await activate(client, 'dialects');
    expect(service.connection.status).toBe('active');
    expect((await client.call('tools.list', { serviceId: service.id })).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['draft7', 'modern']));
    await client.call('services.delete', { name: 'dialects' });
  });
});

describe('misbehaving and exiting servers', () => {
  it('drains megabytes of stderr and keeps only a small tail', async () => {
    await registerScenario(client, 'noisy', ['--stderr-mb', '8']);
    const service = await activate(client, 'noisy');
    expect(service.connection.status).toBe('active');
    const logs = await client.call('services.logs', { name: 'noisy' });
    expect(logs.stderr.length).toBeLessThanOrEqual(64 * 1024);
    expect(logs.droppedChars).toBeGreaterThan(7 * 1024 * 1024);
    await client.call('services.delete', { name: 'noisy' });
  });

  it('stops a server that ignores stdin EOF and SIGTERM, and its grandchild', async () => {
    // The grandchild's pid as the server sees it is the host's only unsandboxed (sandboxed: sandbox-lifecycle.test.ts).
    await registerScenario(client, 'stubborn', ['--ignore-signals', '--grandchild'], { sandbox: NO_SANDBOX });
    const service = await activate(client, 'stubborn');
    const pid = pidOf(service);
    const grandchild = Number(/grandchild pid (\d+)/.exec((await client.call('services.logs', { name: 'stubborn' })).stderr)?.[1]);
    expect(isRunning(grandchild)).toBe(true);
    const { service: after } = await client.call('services.disable', { name: 'stubborn' });
    expect(after.connection.status).toBe('disabled');
    expect(isRunning(pid)).toBe(false);
    expect(isRunning(grandchild)).toBe(false);
    expect((await client.call('services.logs', { name: 'stubborn' })).stderr).toContain('ignoring SIGTERM');
    await client.call('services.delete', { name: 'stubborn' });
  });

  it('fails a server that exits while active, withdraws its tools and never restarts it', async () => {
    const service = await registerScenario(client, 'crasher');
    const pid = pidOf(await activate(client, 'crasher'));
    const failure = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    process.kill(pid, 'SIGKILL');
    expect(await failure).toMatchObject({ connection: { code: 'SERVER_EXITED', message: expect.stringContaining('killed by SIGKILL') } });
    expect((await client.call('tools.list', { serviceId: service.id })).tools).toEqual([]);
    await client.call('daemon.status');
    const later = log.events.filter((e) => e.type === 'service.state' && e.service.id === service.id).at(-1);
    expect(later).toMatchObject({ connection: { status: 'failed' } });
    await client.call('services.delete', { name: 'crasher' });
  });

  it('stops a running server when it is edited or deleted, tools first', async () => {
    const service = await registerScenario(client, 'edit-me');
    const pid = pidOf(await activate(client, 'edit-me'));
    const { service: edited } = await client.call('services.update', { id: service.id, set: { args: [scenarioServer, '--tools', '1'] } });
    expect(edited).toMatchObject({ enabled: false, configVersion: 2, connection: { status: 'disabled' } });
    expect(isRunning(pid)).toBe(false);
    const stopping = log.events.findIndex((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'stopping');
    expect(stopping).toBeGreaterThan(-1);

    const pid2 = pidOf(await activate(client, 'edit-me'));
    await client.call('services.delete', { id: service.id });
    expect(isRunning(pid2)).toBe(false);
    expect((await client.call('tools.list', { serviceId: service.id })).tools).toEqual([]);

    // Tools first: once the stop has begun, the tools are gone while the process still runs.
    // A server that ignores SIGTERM, under a daemon of its own with a long stop grace, stays
    // up until a second stop request, so there is time to look.
    const dir = tempDir();
    try {
      const slow = await startWispd(dir.path, { args: ['--stop-grace-ms', '60000'] });
      const c = await slow.connect();
      const events = await EventLog.follow(c);
      const stubborn = await registerScenario(c, 'stubborn', ['--ignore-signals']);
      const running = pidOf(await activate(c, 'stubborn'));
      expect((await c.call('tools.list', { serviceId: stubborn.id })).tools.length).toBeGreaterThan(0);
      const editing = c.call('services.update', { id: stubborn.id, set: { args: [scenarioServer, '--ignore-signals', '--tools', '1'] } });
      await events.waitFor((e) => e.type === 'service.state' && e.service.id === stubborn.id && e.connection.status === 'stopping');
      expect((await c.call('tools.list', { serviceId: stubborn.id })).tools).toEqual([]);
      expect((await c.call('daemon.status')).counts.activeTools).toBe(0);
      expect(isRunning(running)).toBe(true);
      await c.call('services.disable', { id: stubborn.id }); // the second request: SIGKILL now
      expect((await editing).service.connection.status).toBe('disabled');
      expect(isRunning(running)).toBe(false);
      await c.call('daemon.shutdown');
      await slow.exited;
    } finally {
      dir.remove();
    }
  });

  it('cancels an activation when the client that asked disconnects', async () => {
    const service = await registerScenario(client, 'abandoned', ['--init-delay', '30000'], { timeoutMs: 60_000 });
    const asker = await daemon.connect();
    const spawned = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'activating' && e.connection.phase === 'initializing');
    void asker.call('services.activate', { id: service.id, configVersion: 1 }).catch(() => undefined);
    await spawned;
    const cancelled = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    await asker.close();
    expect(await cancelled).toMatchObject({ connection: { code: 'CANCELLED' } });
    await client.call('services.delete', { id: service.id });
  });
});

describe('stop requests', () => {
  it('forces the stop on a second request', async () => {
    const dir = tempDir();
    try {
      const slow = await startWispd(dir.path, { args: ['--stop-grace-ms', '60000'] });
      const c = await slow.connect();
      await registerScenario(c, 'stubborn', ['--ignore-signals']);
      const pid = pidOf(await activate(c, 'stubborn'));
      const events = await EventLog.follow(c);
      const first = c.call('services.disable', { name: 'stubborn' });
      await events.waitFor((e) => e.type === 'service.state' && e.connection.status === 'stopping');
      const second = await c.call('services.disable', { name: 'stubborn' });
      expect(second.service.connection.status).toBe('disabled');
      expect((await first).service.connection.status).toBe('disabled');
      expect(isRunning(pid)).toBe(false);
      slow.child.kill('SIGKILL');
      await slow.exited;
    } finally {
      dir.remove();
    }
  });
});
