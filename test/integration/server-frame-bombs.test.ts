import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { activate, EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 33, HIGH 1: one ~10 KB frame from an activated server, nested about 5,000 levels deep
// (a response to an id the daemon never sent), made the SDK's JSON.stringify throw out of the
// stdio transport's frame handler, and wispd exited. Every server message is now measured on
// its text before it is parsed, over every transport, and a throw out of a message's handling
// fails that connection only.

const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const KINDS = ['unknown-result', 'error-data', 'notification', 'request'] as const;
type Kind = (typeof KINDS)[number];
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;

function nested(levels: number): string {
  return `${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}`;
}

function bombFrame(kind: Kind, levels = 5000): string {
  const deep = nested(levels);
  switch (kind) {
    case 'unknown-result':
      return `{"jsonrpc":"2.0","id":999999,"result":{"x":${deep}}}`;
    case 'error-data':
      return `{"jsonrpc":"2.0","id":999999,"error":{"code":-32000,"message":"boom","data":${deep}}}`;
    case 'notification':
      return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${deep}}}`;
    case 'request':
      return `{"jsonrpc":"2.0","id":"bomb-1","method":"ping","params":{"x":${deep}}}`;
  }
}

const TOOLS = { tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }] };
const INIT = { protocolVersion: '2025-06-18', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'bomb', version: '1.0.0' } };

interface RemoteBomb {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function readBody(req: http.IncomingMessage): Promise<{ id?: unknown; method?: string }> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => resolve(JSON.parse(text) as { id?: unknown; method?: string }));
  });
}

/**
 * What goes before a bomb's data line in its SSE event. Issue 44: the SSE meter measured
 * every line of an event, so a comment `: "` made it take the data after it for string text.
 */
type Lead = '' | ': "\n' | 'id: "\r\n' | ': "\r';

/** A streamable HTTP server that answers initialize, then answers tools/list with an SSE stream carrying the list and the bomb after it. */
async function streamableBomb(kind: Kind, lead: Lead = ''): Promise<RemoteBomb> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    void readBody(req).then((message) => {
      if (message.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INIT }));
      } else if (message.method === 'tools/list') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: TOOLS })}\n\n`);
        res.end(`${lead}event: message\ndata: ${bombFrame(kind)}\n\n`);
      } else if (message.id === undefined) res.writeHead(202).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * A legacy HTTP+SSE server: the event stream names the endpoint; after tools/list's answer it
 * carries the bomb. With `onCall`, no bomb after the list: the answer to tools/call is a
 * result whose structuredContent nests 6,000 levels (it reached withoutBinaries).
 */
async function legacyBomb(kind: Kind, lead: Lead = '', onCall = false): Promise<RemoteBomb> {
  let stream: http.ServerResponse | undefined;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
      return;
    }
    void readBody(req).then((message) => {
      res.writeHead(202).end();
      const send = (value: string, before = ''): void => void stream?.write(`${before}event: message\ndata: ${value}\n\n`);
      if (message.method === 'initialize') send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INIT }));
      else if (message.method === 'tools/list') {
        send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: TOOLS }));
        if (!onCall) send(bombFrame(kind), lead);
      } else if (message.method === 'tools/call' && onCall) {
        send(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[],"structuredContent":{"x":${nested(6000)}}}}`, lead);
      } else if (message.id !== undefined) send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/sse`,
    close: () =>
      new Promise((resolve) => {
        stream?.destroy();
        server.close(() => resolve());
      }),
  };
}

const remotes: RemoteBomb[] = [];

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
  const watcher = await daemon.connect();
  log = await EventLog.follow(watcher);
  // A well-behaved neighbour that must stay up through every bomb.
  await client.call('services.register', { name: 'neighbour', command: process.execPath, args: [hostile, 'echo'] });
  expect((await activate(client, 'neighbour')).connection.status).toBe('active');
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await Promise.all(remotes.map((r) => r.close()));
  killLeftovers();
  home.remove();
});

/** Activates `name` and waits until the bomb has failed it; returns the failed connection. */
async function failedBy(service: Service): Promise<{ code: string; message: string }> {
  const failed = log.waitFor((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
  await client.call('services.activate', { id: service.id, configVersion: service.configVersion }).catch(() => undefined);
  const event = await failed;
  if (event.type !== 'service.state' || event.connection.status !== 'failed') throw new Error('unexpected event');
  return { code: event.connection.code, message: event.connection.message };
}

async function stillServing(): Promise<void> {
  const status = await client.call('daemon.status');
  expect(status.pid).toBe(daemon.pid);
  const neighbour = (await client.call('services.get', { name: 'neighbour' })).service;
  expect(neighbour.connection.status).toBe('active');
}

describe('a server message nested thousands of levels deep', () => {
  for (const kind of KINDS) {
    it(`over stdio (${kind}): fails that server with PROTOCOL_ERROR; the daemon and its other services go on`, async () => {
      const { service } = await client.call('services.register', { name: `stdio-${kind}`, command: process.execPath, args: [hostile, 'nest-bomb', kind] });
      const failure = await failedBy(service);
      expect(failure).toEqual({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('nested more than 512 levels deep') });
      await stillServing();
    });
  }

  for (const [transport, start] of [
    ['http', streamableBomb],
    ['sse', legacyBomb],
  ] as const) {
    for (const kind of ['unknown-result', 'notification'] as const) {
      it(`over ${transport} (${kind}): refused on its text, and that server fails with PROTOCOL_ERROR`, async () => {
        const remote = await start(kind);
        remotes.push(remote);
        const { service } = await client.call('services.registerRemote', { name: `${transport}-${kind}`, transport, url: remote.url });
        const failure = await failedBy(service);
        expect(failure).toEqual({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('nested more than 512 levels deep') });
        await stillServing();
      });
    }
  }

  for (const [transport, start] of [
    ['http', streamableBomb],
    ['sse', legacyBomb],
  ] as const) {
    for (const lead of [': "\n', 'id: "\r\n', ': "\r'] as const) {
      it(`over ${transport}, after the line ${JSON.stringify(lead)} in its event: still refused on its text (PROTOCOL_ERROR)`, async () => {
        const remote = await start('unknown-result', lead);
        remotes.push(remote);
        const { service } = await client.call('services.registerRemote', { name: `${transport}-lead-${remotes.length}`, transport, url: remote.url });
        const failure = await failedBy(service);
        expect(failure).toEqual({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('nested more than 512 levels deep') });
        await stillServing();
        await client.call('services.delete', { id: service.id });
      });
    }
  }

  it('over sse, a call answered with structuredContent 6,000 levels deep after a comment `: "`: the call and the service fail PROTOCOL_ERROR (not INTERNAL_ERROR with the service active)', async () => {
    const remote = await legacyBomb('unknown-result', ': "\n', true);
    remotes.push(remote);
    const { service } = await client.call('services.registerRemote', { name: 'sse-structured', transport: 'sse', url: remote.url });
    expect((await activate(client, service.name)).connection.status).toBe('active');
    const failed = log.waitFor((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    const asked = log.next((e) => e.type === 'approval.requested' && e.approval.summary.serviceName === service.name);
    const call = client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: {} }).then(
      () => null,
      (error: unknown) => error as { code?: string },
    );
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unexpected event');
    await client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    const refused = await call;
    expect(refused?.code).not.toBe('INTERNAL_ERROR');
    expect(refused).not.toBeNull();
    const state = await failed;
    expect(state.type === 'service.state' && state.connection.status === 'failed' && state.connection.code).toBe('PROTOCOL_ERROR');
    await stillServing();
    await client.call('services.delete', { id: service.id });
  });

  it('a frame nested 500 levels (under the cap) is parsed and handled: the server stays active and answers', async () => {
    const { service } = await client.call('services.register', {
      name: 'stdio-shallow',
      command: process.execPath,
      args: [hostile, 'nest-bomb', 'unknown-result', '500', '--on-call'],
    });
    expect((await activate(client, service.name)).connection.status).toBe('active');
    // The server writes the frame just before its answer: the answer arriving means the frame was handled.
    const asked = log.next((e) => e.type === 'approval.requested');
    const call = client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'after the frame' } });
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unexpected event');
    await client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    expect((await call).text).toBe('after the frame');
    expect((await client.call('services.get', { name: 'stdio-shallow' })).service.connection.status).toBe('active');
  });
});
