import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { makeCanary } from '../helpers/canary.js';
import { gatewayEnv, httpGateway, human, modelName as modelNameOf, stdioGateway, rawGateway, type HttpGateway } from '../helpers/gateway.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { within } from '../helpers/wait.js';
import { killLeftovers, repoRoot, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 36: `wispctl mcp serve` serves 2026-07-28 clients over stdio (stateless: no initialize,
 * `server/discover`, the `_meta` envelope on every request, `resultType` on every result,
 * list changes on `subscriptions/listen`), and 2025 clients as before, on one daemon. Seen by
 * the successor SDK's Client pinned to 2026-07-28 (a client this project did not write), and on
 * the raw wire. Every call still waits for a human in Wisp and is redacted there.
 */
const MODERN = '2026-07-28';
const home = tempDir();
const SECRET = makeCanary();
const modernServer = path.join(repoRoot, 'fixtures', 'servers', 'modern-server.mjs');
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let files: Service;

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;


/** The successor SDK's Client, pinned to 2026-07-28, over `wispctl mcp serve`'s stdio. */
async function modernGateway(): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'], env: gatewayEnv(), stderr: 'pipe' });
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: 'modern-client', version: '2.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as { type: string; text?: string }[]).map((item) => (item.type === 'text' ? (item.text ?? '') : '')).join('\n');
}

const modelName = (service: Service, tool: string): Promise<string> => modelNameOf(admin, service, tool);

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await human(await daemon.connect(), (approval: Approval) => (approval.summary.toolName === 'echo' || approval.summary.toolName === 'env-values' ? 'approve' : null));
  await registerScenario(admin, 'files', ['--call-tools', '--print-env']);
  await admin.call('services.setEnv', { name: 'files', mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  files = await activate(admin, 'files');
  expect(files.connection.status).toBe('active');
});

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve to a 2026-07-28 client (the successor SDK, pinned)', () => {
  it('speaks 2026-07-28 with no initialize, names itself, and lists the catalog as a 2025 client sees it', async () => {
    const modern = await modernGateway();
    const classic = await stdioGateway(daemon.socket);
    try {
      expect(modern.client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(modern.client.getServerVersion()).toMatchObject({ name: 'wisp' });
      expect(classic.client.getServerVersion()).toMatchObject({ name: 'wisp' });
      const now = (await modern.client.listTools()).tools;
      const before = (await classic.client.listTools()).tools;
      expect(now.map((tool) => tool.name)).toEqual(before.map((tool) => tool.name));
      const echo = now.find((tool) => tool.name === 'files__echo');
      expect(echo).toMatchObject({ title: '[from server files] echo', description: '[from server files] tool "echo": Echoes its text argument.' });
    } finally {
      await modern.close();
      await classic.close();
    }
  });

  it('runs a call only once a human approved it in Wisp, named after the client, the secret redacted', async () => {
    const modern = await modernGateway();
    try {
      const name = await modelName(files, 'echo');
      const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.modelName === name);
      const result = await modern.client.callTool({ name, arguments: { text: 'hello from 2026' } });
      expect(result.isError).not.toBe(true);
      expect(text(result)).toBe('hello from 2026');
      const approval = ((await requested) as Requested).approval;
      expect(approval.requester.clientId).toMatch(/^client-\d+ \(mcp:modern-client\)$/);
      const env = await modern.client.callTool({ name: await modelName(files, 'env-values'), arguments: {} });
      expect(JSON.stringify(env)).not.toContain(SECRET);
      expect(text(env)).toContain('[REDACTED:CANARY]');
    } finally {
      await modern.close();
    }
  });

  it('tells a client listening on subscriptions/listen that the tools changed, and lists the new ones', async () => {
    const modern = await modernGateway();
    try {
      let changed: () => void = () => undefined;
      const heard = new Promise<void>((resolve) => (changed = resolve));
      modern.client.setNotificationHandler('notifications/tools/list_changed', () => changed());
      await modern.client.listTools();
      await modern.client.listen({ toolsListChanged: true });
      // A 2026 server beside the 2025 one: both eras on the host side too.
      await admin.call('services.register', { name: 'later', command: process.execPath, args: [modernServer, '--tools', '1'], sandbox: NO_SANDBOX });
      expect((await activate(admin, 'later')).connection).toMatchObject({ status: 'active', server: { protocolVersion: MODERN } });
      await within('notifications/tools/list_changed on the listen stream', heard);
      expect((await modern.client.listTools()).tools.map((tool) => tool.name)).toContain('later__tool-0');
    } finally {
      await modern.close();
    }
  });
});


const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

describe('the 2026-07-28 wire of wispctl mcp serve', () => {
  it('answers server/discover, puts resultType on results, and refuses a request without the envelope or an initialize after', async () => {
    const raw = rawGateway(daemon.socket);
    try {
      const discover = await raw.ask('server/discover', { _meta: envelope });
      expect(discover.result).toMatchObject({ supportedVersions: expect.arrayContaining([MODERN]), capabilities: { tools: { listChanged: true } }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'wisp' } } });
      const listed = await raw.ask('tools/list', { _meta: envelope });
      expect(listed.result).toMatchObject({ resultType: 'complete' });
      const names = (listed.result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      expect(names).toContain('files__echo');
      // In one order, by name (code units): the same bytes whatever order the services were activated in.
      expect(names).toEqual([...names].sort());
      const bare = await raw.ask('tools/list', {});
      expect(bare.error).toMatchObject({ code: expect.any(Number) });
      const late = await raw.ask('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'late', version: '1' } });
      expect(late.error).toMatchObject({ code: expect.any(Number) });
    } finally {
      raw.close();
    }
  });
});

describe('wispctl mcp serve --http to a 2026-07-28 client (stateless, no session)', () => {
  let served: HttpGateway;
  beforeAll(async () => {
    served = await httpGateway(daemon.socket);
  });
  afterAll(async () => {
    await served.interrupt();
  });

  const connect = async (bearer = served.token): Promise<Client> => {
    const client = new Client({ name: 'modern-http', version: '2.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(served.url, { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    return client;
  };

  it('lists and calls as over stdio, each request on its own, the call approved in Wisp', async () => {
    const client = await connect();
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('files__echo');
      expect(names).toEqual([...names].sort());
      const name = await modelName(files, 'echo');
      const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.modelName === name && JSON.stringify(e.approval.summary.arguments) === JSON.stringify({ text: 'over http' }));
      const result = await client.callTool({ name, arguments: { text: 'over http' } });
      expect(text(result)).toBe('over http');
      expect(((await requested) as Requested).approval.requester.clientId).toMatch(/^client-\d+ \(mcp:[\w.-]+\)$/);
    } finally {
      await client.close();
    }
  });

  it('refuses a request without the bearer token, whatever its era', async () => {
    await expect(connect('not-the-token')).rejects.toThrow();
    const raw = await fetch(served.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } }),
    });
    expect(raw.status).toBe(401);
  });

  it('tells a listening client that the tools changed', async () => {
    const client = await connect();
    try {
      let changed: () => void = () => undefined;
      const heard = new Promise<void>((resolve) => (changed = resolve));
      client.setNotificationHandler('notifications/tools/list_changed', () => changed());
      await client.listen({ toolsListChanged: true });
      await registerScenario(admin, 'third', ['--tools', '1']);
      await activate(admin, 'third');
      await within('notifications/tools/list_changed on the HTTP listen stream', heard);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('third__tool-0');
    } finally {
      await client.close();
    }
  });
});
