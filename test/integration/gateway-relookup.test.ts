import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { followListChanged, httpGateway } from '../helpers/gateway.js';
import { activate, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 33 (also found), the gateway's side:
 * - started without --socket (as an MCP client starts it: no XDG_RUNTIME_DIR, so it finds the
 *   daemon through the pointer in the data dir), it looks the socket up again on every
 *   reconnection, so a daemon stopped and started on another socket is found;
 * - it bounds the nesting of its MCP client's frames as the daemon bounds its own clients':
 *   a nesting bomb on stdin (or in an HTTP body) is refused on its text with an error, and the
 *   gateway keeps answering.
 */
const homes: { remove: () => void }[] = [];
afterAll(() => {
  killLeftovers();
  for (const home of homes) home.remove();
});

/** A frame `depth` levels deep inside a call's arguments, never parsed by the gateway. */
function bomb(id: number, name: string, depth = 100_000): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":{"text":"x","deep":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
}

describe('mcp serve without --socket finds a daemon restarted on another socket', () => {
  it('re-reads the socket pointer at each reconnection: the tools are gone, then back from the new socket', async () => {
    const root = tempDir('wisp-relook-');
    homes.push(root);
    const home = path.join(root.path, 'home');
    const dataDir = path.join(home, '.local', 'share', 'wisp');
    const [first, second] = [path.join(root.path, 'run1'), path.join(root.path, 'run2')];
    for (const dir of [home, first, second]) mkdirSync(dir, { mode: 0o700 });
    const daemonOn = (runtime: string): Promise<RunningDaemon> =>
      startWispd(dataDir, { dataDirFlag: false, env: { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime }, args: ['--stop-grace-ms', '300'] });

    let daemon = await daemonOn(first);
    expect(daemon.socket).toBe(path.join(first, 'wisp', 'wispd.sock'));
    let admin = await daemon.connect();
    await registerScenario(admin, 'files');
    expect((await activate(admin, 'files')).connection.status).toBe('active');
    const offered = (await admin.call('tools.list', {})).tools.map((t) => `${t.serviceName}__${t.name}`).sort();

    // The TypeScript SDK's default environment: no XDG_RUNTIME_DIR, no --socket.
    const user = os.userInfo().username;
    const env = { HOME: home, LOGNAME: user, PATH: process.env.PATH ?? '', SHELL: '/bin/sh', TERM: 'dumb', USER: user };
    const transport = new StdioClientTransport({ command: process.execPath, args: [wispctlBin, 'mcp', 'serve'], env, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'relookup-test', version: '1.0.0' }, { capabilities: {} });
    const nextListChanged = followListChanged(client);
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(offered);

      const gone = nextListChanged();
      await admin.call('daemon.shutdown');
      await admin.close();
      await daemon.exited;
      await gone;
      expect((await client.listTools()).tools).toEqual([]);

      // Started again with another runtime dir: another socket, and a new pointer to it.
      let back = nextListChanged();
      daemon = await daemonOn(second);
      expect(daemon.socket).toBe(path.join(second, 'wisp', 'wispd.sock'));
      admin = await daemon.connect();
      expect((await activate(admin, 'files')).connection.status).toBe('active');
      for (;;) {
        await back;
        back = nextListChanged();
        if ((await client.listTools()).tools.length > 0) break;
      }
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual((await admin.call('tools.list', {})).tools.map((t) => `${t.serviceName}__${t.name}`).sort());
      const status = await admin.call('daemon.status');
      expect(status.counts.clients).toBe(2);
      expect(stderr).not.toMatch(/Unhandled|uncaught/i);
    } finally {
      await client.close();
      await admin.call('daemon.shutdown').catch(() => undefined);
      await admin.close();
      await daemon.exited;
    }
  }, 90_000);
});

/** `wispctl mcp serve` over raw pipes: what a hostile MCP client writes, line by line. */
class RawGateway {
  private out = '';
  private readonly waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  readonly exited: Promise<number | null>;
  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr.resume();
    child.stdout.on('data', (chunk: Buffer) => {
      this.out += chunk.toString();
      let newline = this.out.indexOf('\n');
      while (newline !== -1) {
        const line = JSON.parse(this.out.slice(0, newline)) as Record<string, unknown>;
        this.out = this.out.slice(newline + 1);
        for (const waiter of this.waiters.splice(0)) {
          if (waiter.match(line)) waiter.resolve(line);
          else this.waiters.push(waiter);
        }
        newline = this.out.indexOf('\n');
      }
    });
  }

  static start(socket: string): RawGateway {
    return new RawGateway(spawn(process.execPath, [wispctlBin, '--socket', socket, 'mcp', 'serve'], { env: daemonEnv(), stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Writes `text` and a newline; resolves at the first line out that matches. */
  send(text: string, match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((resolve) => this.waiters.push({ match, resolve }));
    this.child.stdin.write(`${text}\n`);
    return answered;
  }
}

const byId = (id: number | null) => (line: Record<string, unknown>) => line.id === id;

describe('the gateway bounds the nesting of its MCP client\'s frames', () => {
  it('answers a nesting bomb on stdin with an error (it was not parsed), and keeps working', async () => {
    const home = tempDir();
    homes.push(home);
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
    const admin = await daemon.connect();
    await registerScenario(admin, 'files');
    await activate(admin, 'files');
    const echo = 'files__echo';
    const gateway = RawGateway.start(daemon.socket);
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } };
      expect(await gateway.send(JSON.stringify(init), byId(1))).toHaveProperty('result');
      gateway.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

      const refused = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'the message nests deeper than 16384 levels; it was not parsed', data: { limit: 'maxFrameNesting', max: 16384 } } };
      expect(await gateway.send(bomb(2, echo), byId(null))).toEqual(refused);
      // A response to an id it never sent, nested as deep: refused alike (the SDK would quote it whole in an error).
      expect(await gateway.send(`{"jsonrpc":"2.0","id":77,"result":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`, byId(null))).toEqual(refused);

      const listed = await gateway.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), byId(3));
      expect((listed.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain(echo);
      // Nesting under the bound is the daemon's to judge: refused there by its own rule, with this call's id.
      const shallow = await gateway.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: echo, arguments: { text: 'x', deep: JSON.parse(`${'['.repeat(100)}${']'.repeat(100)}`) as unknown } } }), byId(4));
      expect(shallow.result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^INVALID_ARGUMENTS: "arguments" nests deeper than 64 levels/) as unknown }] });
      expect(gateway.child.exitCode).toBeNull();
      gateway.child.stdin.end();
      expect(await gateway.exited).toBe(0);
    } finally {
      gateway.child.kill('SIGKILL');
      await admin.call('daemon.shutdown').catch(() => undefined);
      await admin.close();
      await daemon.exited;
    }
  }, 60_000);

  it('over --http: a nesting bomb body is refused with 400 and the same error, and the next request is served', async () => {
    const home = tempDir();
    homes.push(home);
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
    const admin = await daemon.connect();
    const gateway = await httpGateway(daemon.socket);
    try {
      const post = (body: string) =>
        fetch(gateway.url, { method: 'POST', headers: { Authorization: `Bearer ${gateway.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body });
      const refused = await post(bomb(1, 'anything'));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'the message nests deeper than 16384 levels; it was not parsed' } });
      const client = await gateway.connect('after-the-bomb');
      expect((await client.listTools()).tools).toEqual([]);
      await client.close();
    } finally {
      expect(await gateway.interrupt()).not.toBeNull();
      await admin.call('daemon.shutdown').catch(() => undefined);
      await admin.close();
      await daemon.exited;
    }
  }, 60_000);
});
