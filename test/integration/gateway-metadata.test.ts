import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { human, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35: what a server says of its tools (title, annotations, outputSchema, icons, _meta)
 * and resource links in results reach the client of `wispctl mcp serve`, checked; seen by
 * the official SDK Client over stdio against a real daemon and a real fixture server.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let rich: Service;
let plain: Service;
let log: EventLog;
let gateway: GatewayClient;
let asked: { requested: Approval[] };
let policy: (approval: Approval) => 'approve' | 'deny' | null = () => 'approve';

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

async function offered(tool: string): Promise<Tool> {
  const found = (await gateway.client.listTools()).tools.find((t) => t.name === `rich__${tool}`);
  if (found === undefined) throw new Error(`the gateway offers no ${tool}`);
  return found;
}

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  asked = await human(await daemon.connect(), (approval) => policy(approval));
  await registerScenario(admin, 'rich', ['--rich-tools']);
  rich = await activate(admin, 'rich');
  expect(rich.connection.status).toBe('active');
  await registerScenario(admin, 'plain');
  plain = await activate(admin, 'plain');
  log = await EventLog.follow(admin);
  gateway = await stdioGateway(daemon.socket);
});

afterAll(async () => {
  await gateway.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve keeps what servers say of their tools', () => {
  it('passes title, annotations (hints and a labelled title only), outputSchema, the safe icons and small _meta', async () => {
    const shaped = await offered('shaped');
    expect(shaped.title).toBe('[from server rich] Shaped tool');
    expect(shaped.description).toMatch(/^\[from server rich\] tool "shaped": /);
    expect(shaped.annotations).toEqual({ title: '[from server rich] Shaped', readOnlyHint: true, destructiveHint: false });
    expect(shaped.outputSchema).toEqual({ type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string' } }, required: ['n'] });
    // Only the https: one (no credentials) and the PNG data: URI; javascript:, an SVG, http:, credentials and an HTML type are dropped.
    expect(shaped.icons?.map((icon) => icon.src.slice(0, 22))).toEqual(['https://example.com/sh', 'data:image/png;base64,']);
    expect(shaped.icons?.[0]).toEqual({ src: 'https://example.com/shaped.png', mimeType: 'image/png', sizes: ['48x48'], theme: 'light' });
    expect(shaped._meta).toEqual({ 'example.com/owner': 'fixture' });
    // Over 4 KB of _meta: left out whole.
    const big = await offered('big-meta');
    expect(big._meta).toBeUndefined();
    expect(big.outputSchema).toBeUndefined();
  });

  it('a read-only hint skips no approval: the call waits for the human, and a denial holds', async () => {
    policy = () => 'deny';
    const before = asked.requested.length;
    const denied = await gateway.client.callTool({ name: (await offered('shaped')).name, arguments: { mode: 'ok' } });
    policy = () => 'approve';
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/^APPROVAL_DENIED: /);
    expect(asked.requested.slice(before).map((a) => [a.summary.serviceName, a.summary.toolName, a.summary.annotations])).toEqual([['rich', 'shaped', expect.objectContaining({ readOnlyHint: true })]]);
  });

  it('structuredContent that meets the outputSchema passes; one that breaks it, or none, is a tool error that says why', async () => {
    const name = (await offered('shaped')).name;
    // The SDK Client checks structuredContent against the outputSchema it was offered: it passes.
    const ok = await gateway.client.callTool({ name, arguments: { mode: 'ok' } });
    expect(ok.isError).not.toBe(true);
    expect(ok.structuredContent).toEqual({ n: 7, label: 'seven' });
    expect(text(ok)).toBe('shaped ok');

    const wrong = await gateway.client.callTool({ name, arguments: { mode: 'wrong' } });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(text(wrong)).toContain('PROTOCOL_ERROR: rich/shaped has an outputSchema, but its structured content was left out (it does not match the tool\'s outputSchema: "/n" must be integer)');
    expect(text(wrong)).toContain('shaped wrong');

    const none = await gateway.client.callTool({ name, arguments: { mode: 'none' } });
    expect(none.isError).toBe(true);
    expect(text(none)).toContain('PROTOCOL_ERROR: rich/shaped has an outputSchema, but the server gave no structured content');

    // The daemon's own callers get the same check: the content left out, the text kept.
    const modelName = (await admin.call('tools.list', { serviceId: rich.id })).tools.find((t) => t.name === 'shaped')?.modelName ?? '';
    const direct = await admin.call('tools.call', { modelName, arguments: { mode: 'wrong' } });
    expect(direct.structuredContent).toBeNull();
    expect(direct.structuredOmitted?.reason).toMatch(/^it does not match the tool's outputSchema: /);
    expect(direct.text).toBe('shaped wrong');
  });

  it('resource links keep their URI, name, type and size; a javascript: link stays a marker', async () => {
    const linked = await gateway.client.callTool({ name: (await offered('linker')).name, arguments: {} });
    expect(linked.isError).not.toBe(true);
    expect(linked.content).toEqual([
      { type: 'resource_link', uri: 'https://example.com/report.pdf', name: 'report', mimeType: 'application/pdf', size: 1234 },
      { type: 'text', text: '[omitted by Wisp: resource_link]' },
    ]);
  });
});

describe('wispctl mcp serve names tools SERVICE__TOOL', () => {
  it('valid MCP names, unique, the same after a restart of the service and from a new gateway; invalid ones cleaned with a digest', async () => {
    const names = (await gateway.client.listTools()).tools.map((t) => t.name);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['rich__echo', 'rich__shaped', 'rich__linker', 'plain__echo', 'plain__env']));
    const hello = names.find((n) => n.startsWith('rich__say_hello_'));
    expect(hello).toMatch(/^rich__say_hello__[0-9a-f]{8}$/);
    const long = names.find((n) => n.startsWith('rich__long-'));
    expect(long).toHaveLength(128);
    const described = (await gateway.client.listTools()).tools.find((t) => t.name === hello);
    expect(described?.title).toBe('[from server rich] say hello!');
    expect(described?.description).toBe('[from server rich] tool "say hello!": A name with a space and a bang.');

    await admin.call('services.disable', { id: rich.id });
    await activate(admin, 'rich');
    const again = await stdioGateway(daemon.socket, [], { name: 'again' });
    try {
      expect((await again.client.listTools()).tools.map((t) => t.name).sort()).toEqual([...names].sort());
    } finally {
      await again.close();
    }
  });

  it('a call by the readable name reaches that service\'s tool, bound to it in the approval the human answers', async () => {
    const before = asked.requested.length;
    const echoed = await gateway.client.callTool({ name: 'plain__echo', arguments: { text: 'to plain' } });
    expect(text(echoed)).toBe('to plain');
    const hello = (await gateway.client.listTools()).tools.find((t) => t.name.startsWith('rich__say_hello_'))?.name ?? '';
    const said = await gateway.client.callTool({ name: hello, arguments: {} });
    expect(text(said)).toBe('say hello! called');
    const seen = asked.requested.slice(before);
    expect(seen.map((a) => [a.summary.serviceName, a.summary.toolName, a.binding.serviceId, a.binding.toolName])).toEqual([
      ['plain', 'echo', plain.id, 'echo'],
      ['rich', 'say hello!', rich.id, 'say hello!'],
    ]);
    // Denied: nothing runs.
    policy = () => 'deny';
    const denied = await gateway.client.callTool({ name: 'rich__echo', arguments: { text: 'no' } });
    policy = () => 'approve';
    expect(text(denied)).toMatch(/^APPROVAL_DENIED: /);
    expect(asked.requested.at(-1)?.binding).toMatchObject({ serviceId: rich.id, toolName: 'echo' });
  });

  it('--service NAME serves one service under its tools\' own names, still through the approval', async () => {
    const own = await stdioGateway(daemon.socket, ['--service', 'plain'], { name: 'own-names' });
    try {
      expect((await own.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['echo', 'env']);
      const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.serviceName === 'plain');
      const result = await own.client.callTool({ name: 'echo', arguments: { text: 'as if direct' } });
      expect(text(result)).toBe('as if direct');
      expect(((await requested) as Requested).approval.binding).toMatchObject({ serviceId: plain.id, toolName: 'echo' });
      // Another service's tools are not reachable through it, by any name.
      expect(text(await own.client.callTool({ name: 'rich__echo', arguments: { text: 'x' } }))).toMatch(/^TOOL_NOT_FOUND: /);
    } finally {
      await own.close();
    }
  });
});
