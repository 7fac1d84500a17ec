import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { REAL_SERVERS_VERSION, realServers } from '../../scripts/npm12-runtime.mjs';
import { EventLog } from '../helpers/services.js';
import { describeSandbox } from '../helpers/sandbox.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 34: real servers from the npm registry (the reference servers at one exact version,
 * installed on first use into .cache/ by scripts/npm12-runtime.mjs) work sandboxed with the
 * grants a user would give, driven as a user drives them: `wispctl mcp add` with the grants,
 * `mcp activate --yes` (trust), `mcp call`, each call approved from a second socket
 * connection as a human at `wispctl approvals` would. The daemon's HOME is a home of the
 * test's own with canaries in it (the user's real one is not touched).
 */

const root = tempDir('wisp-real-');
const home = path.join(root.path, 'home');
const docs = path.join(home, 'docs');
const memoryDir = path.join(home, 'memory');
const memoryFile = path.join(memoryDir, 'memory.jsonl');
const canaryFile = path.join(home, '.ssh', 'id_canary');
const canary = `CANARY-${Math.random().toString(36).slice(2)}`;
// Long enough for a first activation of a Node server on a loaded 2-CPU machine.
const TIMEOUT = ['--timeout-ms', '60000'];
let servers: Awaited<ReturnType<typeof realServers>>;
let daemon: RunningDaemon;
let human: WispClient;
let log: EventLog;

const ctl = (args: string[], input?: string) => runWispctl(['--socket', daemon.socket, ...args], { env: daemonEnv({ HOME: home }), ...(input !== undefined ? { input } : {}) });

/** `wispctl mcp call SERVICE TOOL JSON`, its approval answered by the human's connection: what wispctl printed and its exit status. */
async function call(service: string, tool: string, args: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const asked = log.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === tool && JSON.stringify(e.approval.summary.arguments) === JSON.stringify(args));
  const run = ctl(['mcp', 'call', service, tool, JSON.stringify(args)]);
  // A call refused before it asks (an unknown tool, a service not active) ends wispctl first.
  const first = await Promise.race([asked, run]);
  if (!('type' in first)) return first;
  const { approval } = first as Extract<WispEvent, { type: 'approval.requested' }>;
  await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
  return run;
}

/** Registers with `mcp add` and activates with `mcp activate --yes`; returns what activate printed. */
async function addAndActivate(name: string, addArgs: string[], input?: string): Promise<string> {
  const added = await ctl(['mcp', 'add', ...TIMEOUT, ...addArgs], input);
  expect(added.code, added.stderr).toBe(0);
  const activated = await ctl(['mcp', 'activate', name, '--yes']);
  expect(activated.code, `${activated.stdout}${activated.stderr}`).toBe(0);
  return activated.stdout;
}

describeSandbox(`real servers from the npm registry, sandboxed (@modelcontextprotocol/server-* ${REAL_SERVERS_VERSION})`, () => {
  beforeAll(async () => {
    servers = await realServers();
    for (const dir of [docs, memoryDir, path.dirname(canaryFile)]) mkdirSync(dir, { recursive: true });
    writeFileSync(canaryFile, `${canary}\n`);
    writeFileSync(path.join(docs, 'from-host.txt'), 'written by the user\n');
    daemon = await startWispd(path.join(root.path, 'data'), { env: daemonEnv({ HOME: home }) });
    human = await daemon.connect();
    log = await EventLog.follow(human);
  }, 300_000);

  afterAll(async () => {
    await human.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
    killLeftovers();
    root.remove();
  });

  it('server-filesystem with one granted directory reads and writes there', async () => {
    const activated = await addAndActivate('files', ['--allow-write', docs, 'files', '--', process.execPath, servers.filesystem, docs]);
    expect(activated).toMatch(/^files: active \(pid \d+, \d+ tools\)/);
    const read = await call('files', 'read_text_file', { path: path.join(docs, 'from-host.txt') });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/^written by the user\n/);
    const wrote = await call('files', 'write_file', { path: path.join(docs, 'from-server.txt'), content: 'written in the sandbox' });
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(readFileSync(path.join(docs, 'from-server.txt'), 'utf8')).toBe('written in the sandbox');
  }, 120_000);

  it('server-filesystem refuses a path outside its directory itself (a canary in the home, a file written there)', async () => {
    const read = await call('files', 'read_text_file', { path: canaryFile });
    expect(read.code).toBe(1);
    expect(read.stderr).toContain('Access denied - path outside allowed directories');
    expect(read.stdout + read.stderr).not.toContain(canary);
    const planted = path.join(home, 'planted.txt');
    const wrote = await call('files', 'write_file', { path: planted, content: 'x' });
    expect(wrote.code).toBe(1);
    expect(existsSync(planted)).toBe(false);
  }, 120_000);

  it('told a wider root (the whole home) but granted one directory, it finds the rest absent: the sandbox refuses it', async () => {
    const added = await ctl(['mcp', 'add', ...TIMEOUT, '--allow-write', docs, 'wide', '--', process.execPath, servers.filesystem, home]);
    expect(added.code, added.stderr).toBe(0);
    // The trust prompt offers the home its args name; nothing grants it by itself.
    expect((await ctl(['mcp', 'show', 'wide'])).stdout).toContain(`not granted:  args[1] names ${home}; it will not see it unless you grant it`);
    expect((await ctl(['mcp', 'activate', 'wide', '--yes'])).code).toBe(0);
    const read = await call('wide', 'read_text_file', { path: canaryFile });
    expect(read.code).toBe(1);
    expect(read.stderr).toContain('ENOENT');
    expect(read.stdout + read.stderr).not.toContain(canary);
    // Its home is a private, empty one: it lists only the mount point of the granted directory.
    const listed = await call('wide', 'list_directory', { path: home });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^\[DIR\] docs\n(structured|$)/);
    // What it writes "in the home" lands in that private one, and is gone with it.
    const planted = path.join(home, 'planted.txt');
    expect((await call('wide', 'write_file', { path: planted, content: 'x' })).code).toBe(0);
    expect(existsSync(planted)).toBe(false);
    // The granted directory is the real one.
    expect((await call('wide', 'read_text_file', { path: path.join(docs, 'from-server.txt') })).stdout).toMatch(/^written in the sandbox\n/);
  }, 120_000);

  it('the same server and root with the sandbox off reads the canary: the sandbox is what stopped it', async () => {
    await addAndActivate('wide-open', ['--no-sandbox', 'wide-open', '--', process.execPath, servers.filesystem, home]);
    const read = await call('wide-open', 'read_text_file', { path: canaryFile });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toMatch(new RegExp(`^${canary}\n`));
    expect((await ctl(['mcp', 'disable', 'wide-open'])).code).toBe(0);
  }, 120_000);

  it('server-memory keeps its graph in a granted file, and it persists across a restart of the service', async () => {
    const addArgs = ['--env', 'MEMORY_FILE_PATH', '--session', '--allow-write', memoryDir, 'memory', '--', process.execPath, servers.memory];
    expect(await addAndActivate('memory', addArgs, `${memoryFile}\n`)).toMatch(/^memory: active \(pid \d+, \d+ tools\)/);
    const first = (await human.call('services.get', { name: 'memory' })).service.connection;
    const created = await call('memory', 'create_entities', { entities: [{ name: 'wisp', entityType: 'project', observations: ['runs sandboxed'] }] });
    expect(created.code, created.stderr).toBe(0);
    expect(readFileSync(memoryFile, 'utf8')).toContain('"runs sandboxed"');
    expect((await ctl(['mcp', 'disable', 'memory'])).code).toBe(0);
    expect((await ctl(['mcp', 'activate', 'memory', '--yes'])).code).toBe(0);
    const second = (await human.call('services.get', { name: 'memory' })).service.connection;
    expect(second.status === 'active' && first.status === 'active' && second.pid !== first.pid).toBe(true);
    const found = await call('memory', 'search_nodes', { query: 'wisp' });
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toContain('runs sandboxed');
  }, 120_000);

  it('server-everything, registered by its bin link (#!/usr/bin/env node), activates, lists its tools, and echoes, sandboxed', async () => {
    expect(await addAndActivate('everything', ['everything', '--', path.join(servers.bin, 'mcp-server-everything'), 'stdio'])).toMatch(/^everything: active \(pid \d+, \d+ tools\)/);
    expect((await human.call('services.get', { name: 'everything' })).service.sandbox).toEqual({ status: 'on', read: [], write: [], net: { mode: 'none' } });
    const tools = await ctl(['mcp', 'tools', 'everything']);
    expect(tools.stdout).toMatch(/^everything +echo +mcp_/m);
    const echoed = await call('everything', 'echo', { message: 'hello from the sandbox' });
    expect(echoed.code, echoed.stderr).toBe(0);
    expect(echoed.stdout).toMatch(/^Echo: hello from the sandbox\n/);
  }, 120_000);
});
