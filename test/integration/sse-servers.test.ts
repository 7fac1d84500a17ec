import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/** Legacy HTTP+SSE servers: the SDK's SSEServerTransport as a real process, a real daemon, wispctl. */
const home = tempDir();
const sseServer = path.join(repoRoot, 'fixtures', 'servers', 'sse-server.mjs');
let daemon: RunningDaemon;
let client: WispClient;
let human: WispClient;
const servers: ChildProcess[] = [];
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(home.path);
  client = await daemon.connect();
  human = await daemon.connect();
  // Every approval in this file is answered yes by the human.
  human.onEvent((event) => {
    if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await human.call('events.subscribe', { types: ['approval.requested'] });
});
afterAll(async () => {
  await client.close();
  await human.close();
  killLeftovers();
  for (const server of servers) server.kill('SIGKILL');
  home.remove();
});

/** Starts the SSE fixture as its own process; resolves with its event-stream URL. */
async function startSseServer(args: string[] = []): Promise<string> {
  const child = spawn(process.execPath, [sseServer, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(child);
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) return (JSON.parse(line) as { url: string }).url;
  throw new Error('the SSE fixture exited before it listened');
}

async function activate(service: Service): Promise<Service> {
  const { service: current } = await client.call('services.get', { id: service.id });
  return (await client.call('services.activate', { id: current.id, configVersion: current.configVersion })).service;
}

const call = (service: Service, toolName: string, args: Record<string, unknown>) => client.call('tools.call', { serviceId: service.id, toolName, arguments: args });

describe('remote servers over the legacy HTTP+SSE transport', () => {
  it('registers with wispctl mcp add-remote --transport sse, activates, calls, and refuses a 2 MB event', async () => {
    const url = await startSseServer();
    const added = await ctl('mcp', 'add-remote', 'legacy', url, '--transport', 'sse');
    expect(added.code).toBe(0);
    const { service } = await client.call('services.get', { name: 'legacy' });
    expect(service).toMatchObject({ transport: 'sse', url, command: '', enabled: false, origin: { kind: 'manual' } });
    const shown = await ctl('mcp', 'show', 'legacy');
    expect(shown.stdout).toContain(`url:      ${url} (remote`);

    const active = await activate(service);
    expect(active.connection).toMatchObject({ status: 'active', pid: null, toolCount: 2, server: { name: 'sse-fixture' } });
    expect((await call(service, 'echo', { text: 'over sse' })).text).toBe('over sse (call 1)');
    expect((await call(service, 'big', { chars: 1000 })).text).toHaveLength(1000);

    await expect(call(service, 'big', { chars: 2 * 1024 * 1024 })).rejects.toMatchObject({ code: 'FRAME_TOO_LARGE' });
    const { service: after } = await client.call('services.get', { id: service.id });
    expect(after.connection).toMatchObject({ status: 'failed', code: 'FRAME_TOO_LARGE', message: expect.stringContaining('SSE event over the 1048576-byte limit') });
    const list = await ctl('mcp', 'list');
    expect(list.stdout).toMatch(/legacy\s+failed.*sse\s+-\s+FRAME_TOO_LARGE/);
  });

  it('registers with wispctl mcp add --transport sse (claude mcp add\'s form) and activates', async () => {
    const url = await startSseServer();
    const added = await ctl('mcp', 'add', '--transport', 'sse', 'legacy-add', url);
    expect(added.code).toBe(0);
    const { service } = await client.call('services.get', { name: 'legacy-add' });
    expect(service).toMatchObject({ transport: 'sse', url, command: '', enabled: false });
    const active = await activate(service);
    expect(active.connection).toMatchObject({ status: 'active', server: { name: 'sse-fixture' } });
    expect((await call(service, 'echo', { text: 'added' })).text).toBe('added (call 1)');
    await client.call('services.delete', { id: service.id });
  });

  it('refuses any other --transport with the choices', async () => {
    const result = await ctl('mcp', 'add-remote', 'legacy-bad', 'http://127.0.0.1:1/sse', '--transport', 'ws');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--transport must be http or sse for a remote server, not "ws"');
    await expect(client.call('services.get', { name: 'legacy-bad' })).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
  });

  it('sends header values from the secret store on the stream and on every message', async () => {
    const url = await startSseServer(['--token', 'sse-token-5521']);
    const { service } = await client.call('services.registerRemote', { name: 'legacy-auth', url, transport: 'sse' });
    const refused = await activate(service);
    expect(refused.connection).toMatchObject({ status: 'needs_auth', message: expect.stringContaining('HTTP 401') });
    await client.call('services.setHeaders', { id: service.id, mode: 'upsert', headers: [{ name: 'Authorization', value: 'Bearer sse-token-5521', storage: 'session' }] });
    const active = await activate(service);
    expect(active.connection).toMatchObject({ status: 'active', toolCount: 2 });
    expect((await call(service, 'echo', { text: 'with header' })).text).toBe('with header (call 1)');
    expect(JSON.stringify(await client.call('services.get', { id: service.id }))).not.toContain('sse-token-5521');
  });

  it('fails the service, not a silent new session, when the server goes away', async () => {
    const url = await startSseServer();
    const { service } = await client.call('services.registerRemote', { name: 'legacy-gone', url, transport: 'sse' });
    expect((await activate(service)).connection.status).toBe('active');
    const log = await EventLog.follow(client);
    const failed = log.next((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    servers.at(-1)?.kill('SIGKILL');
    expect(await failed).toMatchObject({ connection: { status: 'failed', code: 'SERVER_EXITED', message: `${url} ended its SSE event stream, and the session with it` } });
    await expect(call(service, 'echo', { text: 'anyone?' })).rejects.toMatchObject({ code: expect.stringMatching(/^(SERVICE_NOT_ACTIVE|TOOL_NOT_FOUND)$/) });
  });
});

describe('mcp import keeps the sse type and says where a service came from', () => {
  it('imports a VS Code sse entry as sse, with an import origin shown by mcp get', async () => {
    const file = path.join(home.path, 'vscode-mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: {
          'vs-sse': { type: 'sse', url: 'http://127.0.0.1:9/sse' },
          'vs-http': { type: 'http', url: 'http://127.0.0.1:9/mcp' },
          'vs-odd': { type: 'websocket', url: 'ws://127.0.0.1:9/' },
        },
      }),
    );
    const result = await ctl('--json', 'mcp', 'import', file, '--session');
    expect(result.code).toBe(0);
    const imported = JSON.parse(result.stdout) as { imported: Service[]; skipped: { name: string; reason: string }[] };
    expect(imported.imported.map((s) => [s.name, s.transport, s.origin])).toEqual([
      ['vs-sse', 'sse', { kind: 'import', file, at: expect.any(String) }],
      ['vs-http', 'http', { kind: 'import', file, at: expect.any(String) }],
    ]);
    expect(imported.skipped).toEqual([{ name: 'vs-odd', reason: 'invalid: type "websocket" is not one of stdio, http, sse' }]);
    const shown = await ctl('mcp', 'show', 'vs-sse');
    expect(shown.stdout).toContain(`origin:   imported from ${file} at `);
    expect(shown.stdout).not.toContain('registered by hand');
    const list = await ctl('mcp', 'list');
    expect(list.stdout).toMatch(/vs-sse\s+disabled.*\ssse\s/);
  });
});
