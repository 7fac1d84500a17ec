import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { LIMITS } from '../../src/core/index.js';
import { makeCanary } from '../helpers/canary.js';
import { httpGateway, human, stdioGateway, type GatewayClient, type HttpGateway } from '../helpers/gateway.js';
import { activate, registerScenario } from '../helpers/services.js';
import { until } from '../helpers/wait.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35: what the servers Wisp runs say of their own accord reaches the client of
 * `wispctl mcp serve` (the official SDK Client, a real daemon, the scenario fixture server
 * with --conformance-tools): log messages at the client's level, labelled, redacted, rate
 * limited, related to the call they came during; resource subscriptions counted across
 * clients; list changes. Every tool call is approved by a human at another connection.
 */
const home = tempDir();
const SECRET = makeCanary('CANARY');
let daemon: RunningDaemon;
let admin: WispClient;
let http: HttpGateway;

/** What one client received. */
interface Heard {
  readonly logs: LoggingMessageNotification['params'][];
  readonly updated: string[];
  readonly listChanged: string[];
}

function listen(heard: Heard): (client: Client) => void {
  return (client) => {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.logs.push(n.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.updated.push(n.params.uri));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.listChanged.push('resources'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void heard.listChanged.push('prompts'));
  };
}

const heardNothing = (): Heard => ({ logs: [], updated: [], listChanged: [] });

async function stdioClient(args: string[] = []): Promise<{ gateway: GatewayClient; heard: Heard }> {
  const heard = heardNothing();
  return { gateway: await stdioGateway(daemon.socket, args, { setup: listen(heard) }), heard };
}

function text(result: unknown): string {
  const item = (result as CallToolResult).content[0];
  return item?.type === 'text' ? item.text : '';
}

async function rejection(pending: Promise<unknown>): Promise<McpError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return error;
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  const ref = await registerScenario(admin, 'ref', ['--conformance-tools']);
  await admin.call('services.setEnv', { id: ref.id, mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  expect((await activate(admin, 'ref')).connection.status).toBe('active');
  await registerScenario(admin, 'plain');
  expect((await activate(admin, 'plain')).connection.status).toBe('active');
  await human(await daemon.connect(), () => 'approve');
  http = await httpGateway(daemon.socket, ['--service', 'ref']);
});

afterAll(async () => {
  await http.interrupt();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('log messages through wispctl mcp serve', () => {
  it('declares logging; a log sent during a call goes out related to it, at or above the level the client set, as the server sent it', async () => {
    const heard = heardNothing();
    // No GET stream: a notification reaches this client only on the stream of the request it is related to.
    const client = await http.connect('related', { listen: false, setup: listen(heard) });
    expect(client.getServerCapabilities()).toMatchObject({ logging: {}, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true } });
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'log', arguments: { level: 'info', data: 'below the level' } });
    await client.callTool({ name: 'log', arguments: { level: 'error', data: { rows: 3 }, logger: 'db' } });
    // Each log was sent before its call's answer, on that call's stream: both calls answered, so the one at the level is in.
    expect(heard.logs).toEqual([{ level: 'error', logger: 'db', data: { rows: 3 }, _meta: { 'dev.wisp/service': 'ref' } }]);
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(heard.logs.slice(1).map((l) => l.data)).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    await client.close();
  });

  it('labels a log as the server\'s when services are aggregated, and redacts a secret in it', async () => {
    const { gateway, heard } = await stdioClient();
    const before = heard.logs.length;
    expect(text(await gateway.client.callTool({ name: 'ref__log-secret', arguments: {} }))).toBe('logged a secret');
    const log = heard.logs[before];
    expect(log).toMatchObject({ level: 'error', logger: '[from server ref] auth', _meta: { 'dev.wisp/service': 'ref' } });
    expect(log?.data).toEqual({ message: 'cannot log in with key [REDACTED:CANARY]' });
    expect(JSON.stringify(heard.logs)).not.toContain(SECRET);
    await gateway.close();
  });

  it('drops a flooding server\'s log messages past the rate limit and says how many; the daemon keeps answering', async () => {
    const { gateway, heard } = await stdioClient();
    const count = 2000;
    expect(text(await gateway.client.callTool({ name: 'ref__log-flood', arguments: { count } }))).toBe(`sent ${count + 1} log messages`);
    const flood = (): LoggingMessageNotification['params'][] => heard.logs.filter((l) => typeof l.data === 'string' && /^flood /.test(l.data));
    const dropped = (): number => heard.logs.filter((l) => l.logger === 'wisp').reduce((n, l) => n + Number(/dropped (\d+) log messages/.exec(String(l.data))?.[1] ?? 0), 0);
    // Every message is either relayed or counted as dropped, in Wisp's own warning at the end of the second.
    await until('every flood message relayed or counted', () => flood().length + dropped(), (n) => n === count + 1);
    expect(flood().length).toBeLessThanOrEqual(2 * LIMITS.maxLogMessagesPerSecond);
    expect(heard.logs.find((l) => l.logger === 'wisp')).toMatchObject({ level: 'warning', data: expect.stringMatching(/^Wisp dropped \d+ log messages of server ref \(more than 50 a second\)$/) });
    expect((await admin.call('daemon.status')).pid).toBe(daemon.pid);
    expect((await admin.call('services.get', { name: 'ref' })).service.connection.status).toBe('active');
    await gateway.close();
  });
});

describe('resource subscriptions through wispctl mcp serve', () => {
  const watched = 'wisp://ref/test://watched-resource';
  const touch = async (client: Client): Promise<string> => text(await client.callTool({ name: 'ref__touch', arguments: { uri: 'test://watched-resource' } }));

  it('subscribes upstream once for two clients, relays the change under the gateway\'s URI, stops on unsubscribe, and lets go when the last client disconnects', async () => {
    const first = await stdioClient();
    const second = await stdioClient();
    expect(await touch(first.gateway.client)).toBe('not subscribed');
    expect(first.heard.updated).toEqual([]);
    await first.gateway.client.subscribeResource({ uri: watched });
    await second.gateway.client.subscribeResource({ uri: watched });
    // The server's notification comes before its call's answer, and the gateway relays it before that answer too.
    expect(await touch(first.gateway.client)).toBe('subscribed');
    expect(first.heard.updated).toEqual([watched]);
    await until('the second client hears the change', () => second.heard.updated, (u) => u.length === 1);
    await first.gateway.client.unsubscribeResource({ uri: watched });
    // The second still holds it: the server stays subscribed; the first hears no more.
    expect(await touch(first.gateway.client)).toBe('subscribed');
    expect(first.heard.updated).toEqual([watched]);
    await until('the second client hears the second change', () => second.heard.updated, (u) => u.length === 2);
    // The last subscriber goes away without unsubscribing: the daemon unsubscribes for it.
    await second.gateway.close();
    await until('the server unsubscribed once its last subscriber left', () => touch(first.gateway.client), (t) => t === 'not subscribed');
    expect(first.heard.updated).toEqual([watched]);
    await first.gateway.close();
  });

  it('refuses a subscription to a server that offers none, and to a resource of no service, with the code', async () => {
    const { gateway } = await stdioClient();
    const refused = await rejection(gateway.client.subscribeResource({ uri: 'wisp://plain/anything' }));
    expect(refused.message).toContain('NOT_OFFERED');
    expect((await rejection(gateway.client.subscribeResource({ uri: 'test://watched-resource' }))).code).toBe(-32602);
    await gateway.close();
  });

  it('subscribes the server again when its service is active again after a stop', async () => {
    const { gateway, heard } = await stdioClient();
    await gateway.client.subscribeResource({ uri: watched });
    const { service } = await admin.call('services.get', { name: 'ref' });
    await admin.call('services.disable', { id: service.id });
    expect((await activate(admin, 'ref')).connection.status).toBe('active');
    // A new server process, which knows nothing of the old one's subscriptions: the daemon subscribed it again.
    await until('the client can call the service again', () => touch(gateway.client).catch(() => ''), (t) => t !== '');
    expect(await touch(gateway.client)).toBe('subscribed');
    expect(heard.updated.length).toBeGreaterThanOrEqual(1);
    expect(new Set(heard.updated)).toEqual(new Set([watched]));
    await gateway.close();
  });

  it('relays a server\'s resource and prompt list changes', async () => {
    const { gateway, heard } = await stdioClient();
    expect(text(await gateway.client.callTool({ name: 'ref__change-lists', arguments: {} }))).toBe('changed');
    expect(heard.listChanged).toEqual(['resources', 'prompts']);
    await gateway.close();
  });
});
