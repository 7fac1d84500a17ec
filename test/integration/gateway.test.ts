import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { makeCanary } from '../helpers/canary.js';
import { human, modelName as modelNameOf, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 16: `wispctl mcp serve` seen by the official SDK Client over stdio (a client this
 * project did not write), against a real daemon and real fixture servers. The human answers
 * from a second socket connection, as wispctl or the panel would.
 */
const home = tempDir();
const SECRET = makeCanary();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let files: Service;
let gateway: GatewayClient;
/** What the human at the other connection answers; null: leaves it pending. */
let policy: (approval: Approval) => 'approve' | 'deny' | null = () => 'approve';

type Resolved = Extract<WispEvent, { type: 'approval.resolved' }>;
type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

const modelName = (service: Service, tool: string): Promise<string> => modelNameOf(admin, service, tool);

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await human(await daemon.connect(), (approval) => policy(approval));
  await registerScenario(admin, 'files', ['--call-tools', '--print-env']);
  const set = await admin.call('services.setEnv', { name: 'files', mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  expect(set.service.name).toBe('files');
  files = await activate(admin, 'files');
  expect(files.connection.status).toBe('active');
  gateway = await stdioGateway(daemon.socket);
});

afterAll(async () => {
  await gateway.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve over stdio, with the SDK Client', () => {
  it('lists the active catalog as SERVICE__TOOL, marked as the server\'s, and no host tool', async () => {
    const { tools } = await gateway.client.listTools();
    const echo = tools.find((tool) => tool.title === '[from server files] echo');
    expect(echo?.name).toBe('files__echo');
    expect(echo?.title).toBe('[from server files] echo');
    expect(echo?.description).toBe('[from server files] tool "echo": Echoes its text argument.');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    // Exactly the daemon's catalog: no host tool (list, register, install, activate) among them.
    const catalog = (await admin.call('tools.list', {})).tools.map((tool) => `${tool.serviceName}__${tool.name}`);
    expect(tools.map((tool) => tool.name).sort()).toEqual([...catalog].sort());
    for (const host of ['mcp_list_services', 'mcp_register', 'mcp_install_npm', 'mcp_activate_service']) expect(tools.map((tool) => tool.name)).not.toContain(host);
    const host = await gateway.client.callTool({ name: 'mcp_list_services', arguments: {} });
    expect(host.isError).toBe(true);
    expect(text(host)).toMatch(/^TOOL_NOT_FOUND: /);
    expect(gateway.client.getInstructions()).not.toContain('not running');
  });

  it('calls a tool approved from a second socket connection; the approval and the audit log name the MCP client', async () => {
    policy = () => 'approve';
    const progress: string[] = [];
    const name = await modelName(files, 'echo');
    const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.modelName === name);
    const result = await gateway.client.callTool({ name, arguments: { text: 'hello through the gateway' } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ''),
    });
    expect(result.isError).not.toBe(true);
    expect(text(result)).toBe('hello through the gateway');
    const approval = ((await requested) as Requested).approval;
    expect(approval.requester.clientId).toMatch(/^client-\d+ \(mcp:test-client\)$/);
    expect(approval.summary.arguments).toEqual({ text: 'hello through the gateway' });
    expect(progress.some((message) => message.startsWith('waiting for approval in Wisp'))).toBe(true);
    const audit = readFileSync(path.join(home.path, 'audit.jsonl'), 'utf8');
    expect(audit).toContain(JSON.stringify(approval.requester.clientId));
  });

  it('relays the server\'s own progress to the client\'s token, increasing, its message labelled, after the wait for approval', async () => {
    policy = () => 'approve';
    await registerScenario(admin, 'steps', ['--progress-tool']);
    const steps = await activate(admin, 'steps');
    expect(steps.connection.status).toBe('active');
    try {
      await expect.poll(async () => (await gateway.client.listTools()).tools.map((t) => t.name)).toContain('steps__slow-progress');
      const reports: { progress: number; total?: number; message?: string }[] = [];
      const result = await gateway.client.callTool({ name: 'steps__slow-progress', arguments: { steps: 4, everyMs: 300 } }, undefined, { onprogress: (p) => reports.push(p) });
      expect(result.isError).not.toBe(true);
      // The gateway's own while it waited, then the server's (each at most every 250 ms at the daemon): one token, always increasing.
      expect(reports.map((r) => r.progress)).toEqual([...reports.map((r) => r.progress)].sort((a, b) => a - b));
      expect(new Set(reports.map((r) => r.progress)).size).toBe(reports.length);
      const relayed = reports.filter((r) => r.total !== undefined);
      expect(relayed.length).toBeGreaterThan(0);
      const first = reports.findIndex((r) => r.total !== undefined);
      expect(reports.slice(0, first).some((r) => r.message?.startsWith('waiting for approval in Wisp') === true)).toBe(true);
      // Its numbers after the gateway's own count: the last step is its total.
      const offset = (relayed.at(-1)?.total ?? 0) - 4;
      expect(relayed.every((r) => r.progress - offset >= 1 && r.progress - offset <= 4)).toBe(true);
    } finally {
      await admin.call('services.delete', { id: steps.id });
    }
  });

  it('a denied call is an isError result naming APPROVAL_DENIED', async () => {
    policy = () => 'deny';
    const result = await gateway.client.callTool({ name: await modelName(files, 'echo'), arguments: { text: 'no' } });
    policy = () => 'approve';
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^APPROVAL_DENIED: /);
  });

  it('a secret the server hands back is redacted, as for models', async () => {
    const result = await gateway.client.callTool({ name: await modelName(files, 'env-values'), arguments: {} });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(text(result)).toContain('[REDACTED:CANARY]');
    expect(JSON.stringify(result.structuredContent)).toContain('[REDACTED:CANARY]');
  });

  it('gives structuredContent as the daemon capped it: binaries as markers, left out over 32,000 characters with a note', async () => {
    policy = () => 'approve';
    await registerScenario(admin, 'pictures', ['--structured-tools']);
    const changed = gateway.nextListChanged();
    const pictures = await activate(admin, 'pictures');
    await changed;
    // A tool that requires tasks is not offered (every plain call of it would fail).
    const offered = (await gateway.client.listTools()).tools.map((tool) => tool.name);
    expect(offered).toContain('pictures__media-structured');
    expect(offered).not.toContain('pictures__tasks-only');
    const data = Buffer.from(Array.from({ length: 3072 }, (_, i) => (i * 7) % 256)).toString('base64');
    const media = await gateway.client.callTool({ name: await modelName(pictures, 'media-structured'), arguments: {} });
    expect(media.isError).not.toBe(true);
    expect(JSON.stringify(media)).not.toContain(data.slice(0, 64));
    expect(media.structuredContent).toMatchObject({ raw: '[omitted by Wisp: binary, 3072 bytes]', note: 'a picture' });
    const big = await gateway.client.callTool({ name: await modelName(pictures, 'big-structured'), arguments: { chars: 100_000 } });
    expect(big.structuredContent).toBeUndefined();
    expect(text(big)).toBe('a big structured answer\n[structured content omitted by Wisp: its JSON is 100011 characters, over the 32000-character cap]');
    const gone = gateway.nextListChanged();
    await admin.call('services.delete', { id: pictures.id });
    await gone;
  });

  it('sends tools/list_changed when a service is activated, and lists its tools', async () => {
    await registerScenario(admin, 'more', ['--tools', '2']);
    const changed = gateway.nextListChanged();
    await activate(admin, 'more');
    await changed;
    const { tools } = await gateway.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('more__tool-1');
  });

  it('a notifications/cancelled from the client cancels the waiting approval', async () => {
    policy = () => null;
    const name = await modelName(files, 'echo');
    const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.modelName === name);
    const controller = new AbortController();
    const call = gateway.client.callTool({ name, arguments: { text: 'never' } }, undefined, { signal: controller.signal });
    const approval = ((await requested) as Requested).approval;
    const resolved = log.next((e) => e.type === 'approval.resolved' && e.approval.id === approval.id);
    controller.abort('the user stopped it');
    await expect(call).rejects.toThrow();
    const state = ((await resolved) as Resolved).approval.state;
    expect(state).toMatchObject({ status: 'cancelled', reason: 'the MCP client cancelled the call' });
    policy = () => 'approve';
  });

  it('with --approve-in-client, a client that declares elicitation approves its own call', async () => {
    policy = () => null;
    const asked: string[] = [];
    const own = await stdioGateway(daemon.socket, ['--approve-in-client'], {
      name: 'eliciting client',
      capabilities: { elicitation: {} },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.push(request.params.message);
          schemas.push(JSON.stringify('requestedSchema' in request.params ? request.params.requestedSchema : null));
          return { action: 'accept', content: { decision: 'approve' } };
        }),
    });
    const schemas: string[] = [];
    try {
      const name = await modelName(files, 'echo');
      // A bidi override in the arguments would make the prompt read other than what runs: it is shown escaped.
      const result = await own.client.callTool({ name, arguments: { text: 'approved in the client \u202e;txt.tac' } });
      expect(text(result)).toBe('approved in the client \u202e;txt.tac');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('Service: files');
      expect(asked[0]).toContain('Tool: "echo"');
      expect(asked[0]).toContain('"text": "approved in the client \\u202e;txt.tac"');
      expect(asked[0]).not.toContain('\u202e');
      // Deny is the first choice and the default.
      expect(schemas[0]).toContain('"enum":["deny","approve"],"default":"deny"');
      // The event may reach this test's own connection after the call's result does.
      const resolved = (await log.waitFor((e) => e.type === 'approval.resolved' && JSON.stringify(e.approval.state).includes('(mcp:eliciting-client)'))) as Resolved;
      expect(resolved.approval.state).toMatchObject({ status: 'approved', by: expect.stringMatching(/^client-\d+ \(mcp:eliciting-client\)$/) as unknown });
    } finally {
      policy = () => 'approve';
      await own.close();
    }
  });
});

describe('wispctl mcp serve --defer-tools', () => {
  it('offers only search and execute; search finds a tool, execute runs it through the approval', async () => {
    const deferred = await stdioGateway(daemon.socket, ['--defer-tools'], { name: 'deferred' });
    try {
      const { tools } = await deferred.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['mcp_search_tools', 'mcp_execute_tool']);
      const found = await deferred.client.callTool({ name: 'mcp_search_tools', arguments: { query: 'echoes text files' } });
      const hits = (JSON.parse(text(found)) as { tools: { name: string; service: string; tool: string; description: string }[] }).tools;
      expect(hits[0]).toMatchObject({ service: 'files', tool: 'echo', description: '[from server files] Echoes its text argument.' });
      policy = () => 'approve';
      const ran = await deferred.client.callTool({ name: 'mcp_execute_tool', arguments: { name: hits[0]?.name, arguments: { text: 'deferred call' } } });
      expect(text(ran)).toBe('deferred call');
      const bad = await deferred.client.callTool({ name: 'mcp_execute_tool', arguments: { name: 'nope', arguments: {} } });
      expect(text(bad)).toMatch(/^TOOL_NOT_FOUND: /);
    } finally {
      await deferred.close();
    }
  });

  it('--services offers only the services named, and refuses a call to another', async () => {
    const only = await stdioGateway(daemon.socket, ['--services', 'more'], { name: 'only-more' });
    try {
      const { tools } = await only.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.every((tool) => tool.title?.startsWith('[from server more] ') === true)).toBe(true);
      const refused = await only.client.callTool({ name: await modelName(files, 'echo'), arguments: { text: 'x' } });
      expect(text(refused)).toMatch(/^TOOL_NOT_FOUND: /);
    } finally {
      await only.close();
    }
  });
});

describe('wispctl mcp serve without a daemon', () => {
  it('answers initialize, fails every call with DAEMON_NOT_RUNNING, and reconnects when the daemon starts', async () => {
    const other = tempDir();
    const socket = path.join(other.path, 'wispd.sock');
    const lonely = await stdioGateway(socket);
    let second: RunningDaemon | undefined;
    try {
      expect(lonely.client.getInstructions()).toContain('The Wisp daemon is not running');
      expect(lonely.client.getInstructions()).toContain('wispctl daemon start');
      expect((await lonely.client.listTools()).tools).toEqual([]);
      const failed = await lonely.client.callTool({ name: 'anything', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(text(failed)).toMatch(/^DAEMON_NOT_RUNNING: .*wispctl daemon start/);

      const reconnected = lonely.nextListChanged();
      second = await startWispd(other.path, { args: ['--socket', socket, '--stop-grace-ms', '300'] });
      await reconnected;
      const client = await second.connect();
      await registerScenario(client, 'late');
      const changed = lonely.nextListChanged();
      await activate(client, 'late');
      await changed;
      const { tools } = await lonely.client.listTools();
      expect(tools.map((tool) => tool.title)).toContain('[from server late] echo');
      await client.call('daemon.shutdown');
      await second.exited;
    } finally {
      await lonely.close();
      killLeftovers();
      other.remove();
    }
    // Two processes started and a daemon besides: room for a loaded machine.
  }, 90_000);
});
