import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, WispEvent } from '../../src/core/index.js';
import { followListChanged, human, httpGateway, stdioGateway } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { daemonEnv, isRunning, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 33: the daemon stops (`wispctl daemon stop`), is killed (SIGKILL) and starts again on
 * the same data dir under an MCP client connected through `wispctl mcp serve` (the SDK Client,
 * over stdio and over --http). The gateway lives on: it says the tools are gone
 * (list_changed, an empty tools/list), answers calls with an error result, and when the
 * daemon is back and the service active again, says so and runs calls again.
 */
const homes: { remove: () => void }[] = [];
let policy: (approval: Approval) => 'approve' | 'deny' | null = () => 'approve';

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

afterEach(() => {
  policy = () => 'approve';
  killLeftovers();
});
afterAll(() => {
  for (const home of homes) home.remove();
});

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

/** A daemon on a fixed data dir and socket, with the service "files" active and a human answering approvals from another socket connection. */
class World {
  private readonly home = tempDir();
  readonly socket = path.join(this.home.path, 'wispd.sock');
  daemon: RunningDaemon | null = null;
  log: EventLog | null = null;
  private admin: WispClient | null = null;
  private registered = false;

  constructor() {
    homes.push(this.home);
  }

  /** Starts the daemon (again) and activates "files"; its echo tool's name at the gateway. */
  async up(): Promise<string> {
    this.daemon = await startWispd(this.home.path, { args: ['--socket', this.socket, '--stop-grace-ms', '300'] });
    this.admin = await this.daemon.connect();
    this.log = await EventLog.follow(this.admin);
    await human(await this.daemon.connect(), (approval) => policy(approval));
    if (!this.registered) await registerScenario(this.admin, 'files', ['--call-tools']);
    this.registered = true;
    const files = await activate(this.admin, 'files');
    expect(files.connection.status).toBe('active');
    expect((await this.admin.call('tools.list', { serviceId: files.id })).tools.map((tool) => tool.name)).toContain('echo');
    return 'files__echo';
  }

  /** `wispctl daemon stop`, or SIGKILL. */
  async down(how: 'stop' | 'kill'): Promise<void> {
    const daemon = this.daemon;
    if (daemon === null) return;
    this.daemon = null;
    if (how === 'stop') {
      const stopped = await runWispctl(['--socket', this.socket, 'daemon', 'stop']);
      expect(stopped.code, stopped.stderr).toBe(0);
    } else daemon.child.kill('SIGKILL');
    await daemon.exited;
  }

  async close(): Promise<void> {
    await this.admin?.call('daemon.shutdown').catch(() => undefined);
    await this.daemon?.exited;
  }
}

/** An MCP client through one gateway, and whether that gateway's process still runs. */
interface Through {
  readonly client: Client;
  nextListChanged(): Promise<void>;
  alive(): boolean;
  stderr(): string;
}

/** Lists until the tool `name` is offered, looking again at each list_changed. */
async function offered(through: Through, name: string, changed: Promise<void>): Promise<void> {
  let next = changed;
  for (;;) {
    await next;
    next = through.nextListChanged();
    const { tools } = await through.client.listTools();
    if (tools.some((tool) => tool.name === name)) return;
  }
}

/** The daemon goes away (`how`) under the client, and comes back; the gateway says both, and lives. */
async function goneAndBack(world: World, through: Through, echo: string, how: 'stop' | 'kill'): Promise<string> {
  const gone = through.nextListChanged();
  await world.down(how);
  await gone;
  expect((await through.client.listTools()).tools).toEqual([]);
  const refused = await through.client.callTool({ name: echo, arguments: { text: 'while away' } });
  expect(refused.isError).toBe(true);
  expect(text(refused)).toMatch(/^DAEMON_NOT_RUNNING: .*wispctl daemon start/);
  expect(through.alive(), through.stderr()).toBe(true);

  const back = through.nextListChanged();
  const again = await world.up();
  expect(again).toBe(echo);
  await offered(through, echo, back);
  const ran = await through.client.callTool({ name: echo, arguments: { text: `back after ${how}` } });
  expect(ran.isError, text(ran)).not.toBe(true);
  expect(text(ran)).toBe(`back after ${how}`);
  return again;
}

/** The whole story on one gateway: a call waiting for its approval when the daemon stops, a stop, a SIGKILL, each with the daemon back after. */
async function story(world: World, through: Through, echo: string): Promise<void> {
  expect((await through.client.listTools()).tools.map((tool) => tool.name)).toContain(echo);

  // A call waiting for its approval when the daemon stops: an error result, not a crash.
  policy = () => null;
  const requested = world.log?.next((e) => e.type === 'approval.requested' && e.approval.summary.serviceName === 'files' && e.approval.summary.toolName === 'echo');
  const waiting = through.client.callTool({ name: echo, arguments: { text: 'waits' } });
  expect(((await requested) as Requested).approval.requester.clientId).toMatch(/\(mcp:/);
  const gone = through.nextListChanged();
  await world.down('stop');
  const ended = await waiting;
  policy = () => 'approve';
  expect(ended.isError, through.stderr()).toBe(true);
  expect(text(ended)).toMatch(/^CANCELLED: .*the daemon is stopping/);
  await gone;
  expect((await through.client.listTools()).tools).toEqual([]);
  expect(through.alive(), through.stderr()).toBe(true);
  const back = through.nextListChanged();
  expect(await world.up()).toBe(echo);
  await offered(through, echo, back);

  await goneAndBack(world, through, echo, 'stop');
  await goneAndBack(world, through, echo, 'kill');
  expect(through.stderr()).not.toMatch(/DAEMON_STOPPING|Unhandled|uncaught/i);
}

describe('wispctl mcp serve across a daemon restart', () => {
  it('over stdio: survives a stop and a SIGKILL, says the tools are gone and back', async () => {
    const world = new World();
    const echo = await world.up();
    const gateway = await stdioGateway(world.socket);
    try {
      await story(world, { client: gateway.client, nextListChanged: () => gateway.nextListChanged(), alive: () => isRunning(gateway.pid), stderr: gateway.stderr }, echo);
    } finally {
      await gateway.close();
      await world.close();
    }
    // Six daemon starts and stops, and a gateway: room for a loaded machine.
  }, 150_000);

  it('over --http: survives a stop and a SIGKILL, says the tools are gone and back', async () => {
    const world = new World();
    const echo = await world.up();
    const gateway = await httpGateway(world.socket);
    let nextListChanged: () => Promise<void> = () => Promise.reject(new Error('not connected'));
    const client = await gateway.connect('restart-client', { setup: (c) => (nextListChanged = followListChanged(c)) });
    try {
      await story(world, { client, nextListChanged: () => nextListChanged(), alive: () => gateway.child.exitCode === null && gateway.child.signalCode === null, stderr: gateway.stderr }, echo);
    } finally {
      await client.close();
      await gateway.interrupt();
      await world.close();
    }
  }, 150_000);

  it('over stdio: with the daemon gone, it ends (exit 0) when its client closes stdin: its reconnection holds nothing', async () => {
    const world = new World();
    await world.up();
    await world.down('stop');
    const child = spawn(process.execPath, [wispctlBin, '--socket', world.socket, 'mcp', 'serve'], { env: daemonEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const answered = new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out);
      });
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
    expect(await answered).toContain('The Wisp daemon is not running');
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 60_000);
});
