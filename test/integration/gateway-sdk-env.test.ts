import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 33 (newcomer): on Linux the socket is under $XDG_RUNTIME_DIR, which MCP clients built
 * on the SDKs do not pass to the servers they start. The TypeScript SDK's
 * getDefaultEnvironment() passes HOME, LOGNAME, PATH, SHELL, TERM and USER; the Python SDK's
 * HOME, PATH, SHELL and TERM. A real wispd is started as a user's would be (no --data-dir,
 * XDG_RUNTIME_DIR set), then `wispctl mcp serve` is started by a real SDK Client with exactly
 * each of those environments, and must list the daemon's active tools.
 */
const root = tempDir('wisp-env-');
const home = path.join(root.path, 'home');
const runtime = path.join(root.path, 'run');
const dataDir = path.join(home, '.local', 'share', 'wisp');
const user = os.userInfo().username;
let daemon: RunningDaemon;
let admin: WispClient;
let active: string[];

const TS_SDK_ENV = { HOME: home, LOGNAME: user, PATH: process.env.PATH ?? '', SHELL: '/bin/bash', TERM: 'xterm-256color', USER: user };
const PYTHON_SDK_ENV = { HOME: home, PATH: process.env.PATH ?? '', SHELL: '/bin/bash', TERM: 'xterm-256color' };

/** The SDK's transport adds its defaults from this process's env; a key set undefined is left out of the child's env (Node skips it). */
function exactly(env: Record<string, string>): Record<string, string> {
  const cleared = Object.fromEntries(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].map((key) => [key, undefined]));
  return { ...cleared, ...env } as Record<string, string>;
}

/** The environment a running process really has (Linux). */
function environOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((entry) => entry !== '');
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

async function toolsSeenWith(env: Record<string, string>, args: readonly string[] = [wispctlBin, 'mcp', 'serve']): Promise<{ tools: string[]; environ: Record<string, string> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...args], env: exactly(env), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'sdk-env-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  try {
    const environ = environOf(transport.pid ?? 0);
    const { tools } = await client.listTools();
    expect(stderr).not.toMatch(/DAEMON_NOT_RUNNING|not running/);
    return { tools: tools.map((tool) => tool.name), environ };
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(runtime, { mode: 0o700 });
  daemon = await startWispd(dataDir, { dataDirFlag: false, env: { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime }, args: ['--stop-grace-ms', '300'] });
  expect(daemon.socket).toBe(path.join(runtime, 'wisp', 'wispd.sock'));
  admin = await daemon.connect();
  await registerScenario(admin, 'files', ['--tools', '2']);
  expect((await activate(admin, 'files')).connection.status).toBe('active');
  active = (await admin.call('tools.list', {})).tools.map((tool) => `${tool.serviceName}__${tool.name}`);
  expect(active.length).toBeGreaterThanOrEqual(3);
});

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  root.remove();
});

describe('wispctl finds the daemon from the environment MCP clients really pass', () => {
  it('started by the TypeScript SDK with exactly its default environment, mcp serve lists the active tools', async () => {
    const seen = await toolsSeenWith(TS_SDK_ENV);
    expect(Object.keys(seen.environ).sort()).toEqual(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']);
    expect(seen.tools.sort()).toEqual([...active].sort());
  });

  it('started by the Python SDK with exactly its default environment, mcp serve lists the active tools', async () => {
    const seen = await toolsSeenWith(PYTHON_SDK_ENV);
    expect(Object.keys(seen.environ).sort()).toEqual(['HOME', 'PATH', 'SHELL', 'TERM']);
    expect(seen.tools.sort()).toEqual([...active].sort());
  });

  it('the --print-config snippet names the socket, and what it runs reaches the daemon with the Python environment', async () => {
    const run = await runWispctl(['mcp', 'serve', '--print-config', 'cursor', '--json'], { env: { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime } });
    expect(run.code).toBe(0);
    const entry = (JSON.parse(run.stdout) as { entry: { command: string; args: string[] } }).entry;
    expect(entry.args).toEqual([wispctlBin, '--socket', daemon.socket, 'mcp', 'serve']);
    const seen = await toolsSeenWith(PYTHON_SDK_ENV, entry.args);
    expect(seen.tools.sort()).toEqual([...active].sort());
  });

  it('--data-dir set to the data dir status prints finds the same daemon, and daemon start says it is running', async () => {
    const status = await runWispctl(['status', '--json'], { env: PYTHON_SDK_ENV });
    expect(status.code).toBe(0);
    const printed = (JSON.parse(status.stdout) as { paths: { dataDir: string; socket: string } }).paths;
    expect(printed).toMatchObject({ dataDir, socket: daemon.socket });
    const again = await runWispctl(['--data-dir', printed.dataDir, 'status', '--json'], { env: PYTHON_SDK_ENV });
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as { pid: number }).pid).toBe(daemon.pid);
    const start = await runWispctl(['--data-dir', printed.dataDir, 'daemon', 'start'], { env: PYTHON_SDK_ENV });
    expect(start).toMatchObject({ code: 0, stdout: expect.stringContaining(`already running (pid ${daemon.pid}, socket ${daemon.socket})`) as unknown });
  });

  it('a daemon start that collides with the running daemon fails ALREADY_RUNNING (exit 5), not INTERNAL_ERROR', async () => {
    const start = await runWispctl(['daemon', 'start'], { env: { ...PYTHON_SDK_ENV, WISP_RUNTIME_DIR: path.join(root.path, 'elsewhere') } });
    expect(start.code).toBe(5);
    expect(start.stderr).toContain(`wispd is already running (pid ${daemon.pid}, socket ${daemon.socket})`);
    expect(start.stderr).toMatch(/\(ALREADY_RUNNING\)\n$/);
    expect(start.stderr).not.toContain('INTERNAL_ERROR');
  });
});

describe('the socket pointer in the data dir', () => {
  const pointer = path.join(dataDir, 'wispd-socket.json');
  const daemonEnvironment = { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime };

  it('is written 0600 while wispd runs, removed when it stops, stale after a kill -9 and rewritten by the next start', async () => {
    expect(lstatSync(pointer).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(pointer, 'utf8'))).toEqual({ socket: daemon.socket, pid: daemon.pid });
    await admin.call('daemon.shutdown');
    await daemon.exited;
    expect(existsSync(pointer)).toBe(false);

    const killed = await startWispd(dataDir, { dataDirFlag: false, env: daemonEnvironment });
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(JSON.parse(readFileSync(pointer, 'utf8'))).toEqual({ socket: killed.socket, pid: killed.pid });
    const none = await runWispctl(['status'], { env: PYTHON_SDK_ENV });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`no daemon answers on ${killed.socket}`);

    daemon = await startWispd(dataDir, { dataDirFlag: false, env: daemonEnvironment });
    admin = await daemon.connect();
    expect(JSON.parse(readFileSync(pointer, 'utf8'))).toEqual({ socket: daemon.socket, pid: daemon.pid });
    const status = await runWispctl(['status', '--json'], { env: PYTHON_SDK_ENV });
    expect((JSON.parse(status.stdout) as { pid: number }).pid).toBe(daemon.pid);
  });
});
