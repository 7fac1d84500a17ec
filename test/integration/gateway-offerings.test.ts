import { readFileSync } from 'node:fs';
import path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { makeCanary } from '../helpers/canary.js';
import { stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35: the resources, resource templates and prompts of the servers Wisp runs reach the
 * client of `wispctl mcp serve` (the official SDK Client over stdio, a real daemon, a real
 * fixture server): aggregated under mapped URIs and names, or a service served whole under
 * its own; only active services; redacted and capped by the daemon; reads and prompts on
 * record in the audit log.
 */
const offerServer = path.join(repoRoot, 'fixtures', 'servers', 'offer-server.mjs');
const home = tempDir();
const SECRET = makeCanary('CANARY');
let daemon: RunningDaemon;
let admin: WispClient;
let gateway: GatewayClient;
let whole: GatewayClient;

async function offerService(name: string, active = true): Promise<Service> {
  const { service } = await admin.call('services.register', { name, command: process.execPath, args: [offerServer] });
  const set = await admin.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  if (!active) return set.service;
  const activated = (await admin.call('services.activate', { id: service.id, configVersion: set.service.configVersion })).service;
  expect(activated.connection.status).toBe('active');
  return activated;
}

function texts(contents: readonly object[]): string[] {
  return contents.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : ''));
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
  await offerService('notes');
  await offerService('more');
  await offerService('idle', false);
  await registerScenario(admin, 'plain');
  expect((await activate(admin, 'plain')).connection.status).toBe('active');
  gateway = await stdioGateway(daemon.socket);
  whole = await stdioGateway(daemon.socket, ['--service', 'notes']);
});

afterAll(async () => {
  await gateway.close();
  await whole.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('resources through wispctl mcp serve', () => {
  it('declares resources and prompts, and lists the active services\' resources under wisp://SERVICE/ URIs, labelled, every page read', async () => {
    // Declared; the lists are read from the servers when asked, and their servers' changes relayed (gateway-notices.test.ts).
    expect(gateway.client.getServerCapabilities()).toMatchObject({ resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true }, completions: {} });
    const { resources } = await gateway.client.listResources();
    // Both pages of both active services; not the disabled one, nor the one with a 3,000-character URI; none from a server that offers none.
    expect(resources.map((r) => r.uri).sort()).toEqual(['wisp://more/notes://logo', 'wisp://more/notes://today', 'wisp://notes/notes://logo', 'wisp://notes/notes://today']);
    const today = resources.find((r) => r.uri === 'wisp://notes/notes://today');
    expect(today).toMatchObject({ name: 'today', title: '[from server notes] Today', description: '[from server notes] What happened today', mimeType: 'text/plain' });
    expect(today?._meta).toEqual({ 'dev.wisp/service': 'notes', 'dev.wisp/original': 'notes://today' });
    expect(resources.find((r) => r.uri === 'wisp://notes/notes://logo')).toMatchObject({ mimeType: 'image/png', size: 300 });
  });

  it('reads a resource with the secret redacted, a blob as a marker, and a template\'s URI once expanded', async () => {
    const read = await gateway.client.readResource({ uri: 'wisp://notes/notes://today' });
    expect(read.contents).toEqual([{ uri: 'wisp://notes/notes://today', mimeType: 'text/plain', text: 'today: the key is [REDACTED:CANARY], keep it' }]);
    const logo = await gateway.client.readResource({ uri: 'wisp://more/notes://logo' });
    expect(texts(logo.contents)).toEqual(['[omitted by Wisp: resource image/png, 300 bytes]']);
    expect(logo.contents[0]?.uri).toBe('wisp://more/notes://logo');
    const { resourceTemplates } = await gateway.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(['wisp://more/notes://day/{day}', 'wisp://notes/notes://day/{day}']);
    const day = await gateway.client.readResource({ uri: 'wisp://notes/notes://day/monday' });
    expect(texts(day.contents)).toEqual(['notes of monday']);
  });

  it('refuses a URI of no service it serves (-32602, the URI in data), and passes on the server\'s own refusal', async () => {
    const unknown = await rejection(gateway.client.readResource({ uri: 'wisp://idle/notes://today' }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.data).toEqual({ uri: 'wisp://idle/notes://today' });
    const bare = await rejection(gateway.client.readResource({ uri: 'notes://today' }));
    expect(bare.code).toBe(-32602);
    const refused = await rejection(gateway.client.readResource({ uri: 'wisp://notes/notes://nowhere' }));
    // The server said -32002 (resource not found before 2026-07-28): the client gets the code that means it now.
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('SERVER_REFUSED: ');
    expect(refused.message).toContain('no note at notes://nowhere');
  });
});

describe('prompts through wispctl mcp serve', () => {
  it('lists each active service\'s prompts as SERVICE__NAME with their arguments, labelled', async () => {
    const { prompts } = await gateway.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['more__greet', 'more__summarize', 'notes__greet', 'notes__summarize']);
    expect(prompts.find((p) => p.name === 'notes__summarize')).toMatchObject({
      title: '[from server notes] Summarize',
      description: '[from server notes] prompt "summarize": Summarizes a topic',
      arguments: [{ name: 'topic', description: 'What to summarize', required: true }],
    });
  });

  it('gets a prompt with its arguments filled, the secret redacted and the image a marker', async () => {
    const got = await gateway.client.getPrompt({ name: 'notes__summarize', arguments: { topic: 'the week' } });
    expect(got.description).toBe('[from server notes] A summary of the week');
    expect(got.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Summarize the week. The key is [REDACTED:CANARY].' } },
      { role: 'assistant', content: { type: 'text', text: '[omitted by Wisp: image image/png, 300 bytes]' } },
    ]);
    const missing = await rejection(gateway.client.getPrompt({ name: 'notes__nothing' }));
    expect(missing.code).toBe(-32602);
    const refused = await rejection(gateway.client.getPrompt({ name: 'notes__summarize', arguments: {} }));
    expect(refused.message).toContain('topic is required');
  });
});

describe('completions through wispctl mcp serve', () => {
  it('completes a prompt\'s argument and a template\'s, asked of the service they are from, the secret redacted', async () => {
    expect(gateway.client.getServerCapabilities()?.completions).toBeDefined();
    const topics = await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'notes__summarize' }, argument: { name: 'topic', value: 's' } });
    expect(topics.completion).toEqual({ values: ['security', 'sessions'], total: 2, hasMore: false });
    const secret = await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'notes__summarize' }, argument: { name: 'topic', value: 'C' } });
    expect(secret.completion.values).toEqual(['[REDACTED:CANARY]']);
    const days = await gateway.client.complete({ ref: { type: 'ref/resource', uri: 'wisp://more/notes://day/{day}' }, argument: { name: 'day', value: 't' } });
    expect(days.completion.values).toEqual(['tuesday']);
    const unknown = await rejection(gateway.client.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'topic', value: 's' } }));
    expect(unknown.code).toBe(-32602);
    const own = await whole.client.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'topic', value: 'se' } });
    expect(own.completion.values).toEqual(['security', 'sessions']);
  });
});

describe('one service served whole (--service)', () => {
  it('keeps the server\'s own URIs and prompt names', async () => {
    const { resources } = await whole.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['notes://logo', 'notes://today']);
    const read = await whole.client.readResource({ uri: 'notes://today' });
    expect(texts(read.contents)).toEqual(['today: the key is [REDACTED:CANARY], keep it']);
    expect((await whole.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['notes://day/{day}']);
    expect((await whole.client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['greet', 'summarize']);
    expect((await whole.client.getPrompt({ name: 'greet' })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'hello' } }]);
  });
});

describe('on record, and never the secret', () => {
  it('writes each read and each prompt got to the audit log (what, by whom, how it ended), without the secret', async () => {
    const lines = readFileSync(path.join(daemon.dataDir, 'audit.jsonl'), 'utf8');
    expect(lines).not.toContain(SECRET);
    const records = lines.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const reads = records.filter((r) => r.record === 'resource.read');
    expect(reads).toContainEqual(expect.objectContaining({ service: 'notes', uri: 'notes://today', outcome: 'ok', client: expect.stringMatching(/^client-\d+ \(mcp:test-client\)$/) }));
    expect(reads).toContainEqual(expect.objectContaining({ service: 'notes', uri: 'notes://nowhere', outcome: 'SERVER_REFUSED' }));
    const prompts = records.filter((r) => r.record === 'prompt.get');
    expect(prompts).toContainEqual(expect.objectContaining({ service: 'notes', prompt: 'summarize', outcome: 'ok', argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) }));
    // The socket's own answer is redacted too (the gateway is one client; any other sees the same).
    const direct = await admin.call('resources.read', { serviceId: (await admin.call('services.get', { name: 'more' })).service.id, uri: 'notes://today' });
    expect(JSON.stringify(direct)).not.toContain(SECRET);
    expect(direct.contents).toEqual([{ type: 'resource', uri: 'notes://today', mimeType: 'text/plain', text: 'today: the key is [REDACTED:CANARY], keep it' }]);
  });

  it('refuses a disabled service on the socket (SERVICE_NOT_ACTIVE) and a service that offers none (NOT_OFFERED)', async () => {
    const idle = (await admin.call('services.get', { name: 'idle' })).service;
    await expect(admin.call('resources.list', { serviceId: idle.id })).rejects.toMatchObject({ code: 'SERVICE_NOT_ACTIVE' });
    const plain = (await admin.call('services.get', { name: 'plain' })).service;
    expect(await admin.call('resources.list', { serviceId: plain.id })).toMatchObject({ resources: [], omitted: 0 });
    await expect(admin.call('resources.read', { serviceId: plain.id, uri: 'x://y' })).rejects.toMatchObject({ code: 'NOT_OFFERED' });
    await expect(admin.call('prompts.get', { serviceId: plain.id, name: 'x' })).rejects.toMatchObject({ code: 'NOT_OFFERED' });
    expect(await admin.call('completion.complete', { serviceId: plain.id, ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: '' } })).toMatchObject({ values: [], total: null, hasMore: false });
    const notes = (await admin.call('services.get', { name: 'notes' })).service;
    expect(await admin.call('resources.list', { serviceId: notes.id })).toMatchObject({ omitted: 1 });
  });
});
