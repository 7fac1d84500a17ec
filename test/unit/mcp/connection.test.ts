import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { InitializeRequestSchema, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CallClock } from '../../../src/mcp/call-clock.js';
import { Connection, MAX_TOOL_PAGES, type ConnectionHooks } from '../../../src/mcp/connection.js';
import { StderrTail } from '../../../src/mcp/stderr-tail.js';
import { transportLink, type CatalogTool, type Failure, type StoredService, type TransportFactory } from '../../../src/mcp/index.js';
import { InMemoryServers, storedService, tool, toolServer } from './in-memory.js';

/** What a connection told its owner, in order, with a way to wait for what is still to come. */
class Heard implements ConnectionHooks {
  readonly log: string[] = [];
  readonly lists: { names: string[]; version: number; server: { name: string; version: string } }[] = [];
  readonly failures: Failure[] = [];
  private waiters: { check: () => boolean; resolve: () => void }[] = [];

  spawned(pid: number | null): void {
    this.log.push(`spawned ${String(pid)}`);
  }

  initialized(): void {
    this.log.push('initialized');
  }

  discovered(tools: CatalogTool[], server: { name: string; version: string }, toolListVersion: number): void {
    this.log.push(`discovered ${toolListVersion}`);
    this.lists.push({ names: tools.map((t) => t.name), version: toolListVersion, server });
    this.wake();
  }

  failed(failure: Failure): void {
    this.log.push(`failed ${failure.code}`);
    this.failures.push(failure);
    this.wake();
  }

  /** Resolves once `check` holds. */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  private wake(): void {
    this.waiters = this.waiters.filter((w) => !w.check() || (w.resolve(), false));
  }
}

function connect(servers: InMemoryServers, config: StoredService, transports: TransportFactory = servers.factory): { connection: Connection; heard: Heard } {
  const heard = new Heard();
  const connection = new Connection(config, 1, heard, {
    version: '0.0.0-test',
    ladder: { stdinGraceMs: 1000, termGraceMs: 1000 },
    stderr: new StderrTail(1024),
    searchPath: undefined,
    env: {},
    redact: (text) => text,
    transports,
  });
  return { connection, heard };
}

const never = new AbortController().signal;

describe('Connection (in-memory server)', () => {
  it('activates: initialize, then every page of tools/list, at tool-list version 1', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const servers = new InMemoryServers().add('paged', () => toolServer(names.map((n) => tool(n)), undefined, 2).server);
    const { connection, heard } = connect(servers, storedService('paged'));
    await connection.activate(never);
    expect(heard.log).toEqual(['spawned null', 'initialized', 'discovered 1']);
    expect(heard.lists).toEqual([{ names, version: 1, server: { name: 'in-memory', version: '1.2.3', protocolVersion: '2025-11-25' } }]);
    await connection.stop(false);
  });

  it('refuses a server that keeps paging: activation fails PROTOCOL_ERROR', async () => {
    let pages = 0;
    const servers = new InMemoryServers().add('endless', () => {
      const server = new McpServer({ name: 'endless', version: '1' }, { capabilities: { tools: {} } });
      // Every page empty, every page with a nextCursor.
      server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [], nextCursor: String(++pages) }));
      return server;
    });
    const { connection, heard } = connect(servers, storedService('endless'));
    await expect(connection.activate(never)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringContaining(`after ${MAX_TOOL_PAGES} pages`) });
    expect(pages).toBe(MAX_TOOL_PAGES);
    expect(heard.lists).toEqual([]);
    await connection.stop(true);
  });

  it('hears tools/list_changed: the new list comes at the next version', async () => {
    let mcp!: McpServer;
    const servers = new InMemoryServers().add('growing', () => {
      mcp = new McpServer({ name: 'growing', version: '2.0.0' });
      mcp.registerTool('first', { description: 'the first tool' }, () => ({ content: [{ type: 'text', text: 'one' }] }));
      return mcp;
    });
    const { connection, heard } = connect(servers, storedService('growing'));
    await connection.activate(never);
    expect(heard.lists.at(-1)).toMatchObject({ names: ['first'], version: 1 });
    // Registering on a connected McpServer sends notifications/tools/list_changed.
    mcp.registerTool('second', { description: 'the second tool' }, () => ({ content: [{ type: 'text', text: 'two' }] }));
    await heard.until(() => heard.lists.length === 2);
    expect(heard.lists[1]).toMatchObject({ names: ['first', 'second'], version: 2 });
    expect(connection.isChanging).toBe(false);
    const result = await connection.callTool('second', {}, 10_000, never, 2);
    expect(result.content).toEqual([{ type: 'text', text: 'two' }]);
    await connection.stop(false);
  });

  it('refuses to send a call approved at an older tool-list version: APPROVAL_STALE, nothing sent', async () => {
    const served = toolServer([tool('echo')]);
    const servers = new InMemoryServers().add('versioned', () => served.server);
    const { connection, heard } = connect(servers, storedService('versioned'));
    await connection.activate(never);
    served.server.sendToolListChanged();
    await heard.until(() => heard.lists.length === 2);
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    expect(served.calls).toEqual([]);
    await connection.stop(false);
  });

  it('fails activation with the server\'s own answer when it refuses initialize (PROTOCOL_ERROR, its message kept)', async () => {
    const servers = new InMemoryServers().add('refuses', () => {
      const { server } = toolServer([tool('never-listed')]);
      server.server.setRequestHandler(InitializeRequestSchema, () => {
        throw new Error('not today');
      });
      return server;
    });
    const { connection, heard } = connect(servers, storedService('refuses'));
    await expect(connection.activate(never)).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: expect.stringContaining('not today'),
      remote: { code: -32603, message: 'not today' },
    });
    // Activation reports it, once: the close the SDK makes after a failed initialize is not a second failure.
    expect(heard.log).toEqual(['spawned null']);
    await connection.stop(true);
  });

  it('fails activation SCHEMA_INVALID when an input schema does not compile', async () => {
    const bad = { name: 'bad-schema', inputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } } as const;
    const servers = new InMemoryServers().add('uncompilable', () => toolServer([tool('fine'), bad]).server);
    const { connection, heard } = connect(servers, storedService('uncompilable'));
    await expect(connection.activate(never)).rejects.toMatchObject({ code: 'SCHEMA_INVALID', message: expect.stringContaining('"bad-schema"') });
    expect(heard.lists).toEqual([]);
    await connection.stop(true);
  });

  it('reports a server that goes away after activation: failed SERVER_EXITED', async () => {
    const served = toolServer([tool('echo')]);
    const servers = new InMemoryServers().add('leaving', () => served.server);
    const { connection, heard } = connect(servers, storedService('leaving'));
    await connection.activate(never);
    await served.server.close();
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures.map((f) => f.code)).toEqual(['SERVER_EXITED']);
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'SERVER_EXITED' });
  });

  it('stops: the server sees the connection close, running calls end CANCELLED, and no failure is reported', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const running = new Promise<void>((resolve) => (arrived = resolve));
    const served = toolServer([tool('slow')], async () => {
      arrived();
      await held;
      return { content: [] };
    });
    let serverClosed = false;
    served.server.server.onclose = () => (serverClosed = true);
    const servers = new InMemoryServers().add('stopping', () => served.server);
    const { connection, heard } = connect(servers, storedService('stopping'));
    await connection.activate(never);
    const call = connection.callTool('slow', {}, 10_000, never, 1);
    await running;
    connection.cancelCalls('the service was disabled');
    await connection.stop(false);
    release();
    await expect(call).rejects.toMatchObject({ code: 'CANCELLED', message: expect.stringContaining('the service was disabled') });
    expect(serverClosed).toBe(true);
    expect(heard.failures).toEqual([]);
  });

  it('times a call out at its limit (TIMEOUT), but not while its clock is held (a request waiting for the human)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const running = new Promise<void>((resolve) => (arrived = resolve));
    const served = toolServer([tool('slow'), tool('never')], async (name) => {
      if (name === 'never') return new Promise(() => undefined);
      arrived();
      await held;
      return { content: [{ type: 'text', text: 'answered' }] };
    });
    const servers = new InMemoryServers().add('timing', () => served.server);
    const { connection } = connect(servers, storedService('timing'));
    await connection.activate(never);
    await expect(connection.callTool('never', {}, 50, never, 1)).rejects.toMatchObject({ code: 'TIMEOUT', message: 'the server did not answer within 50 ms' });
    const clock = new CallClock();
    const unhold = clock.hold();
    const call = connection.callTool('slow', {}, 50, never, 1, undefined, clock);
    await running;
    // Held: a call to `never` with the same limit, begun after, times out first; this one is still running.
    let settled = false;
    void call.finally(() => (settled = true)).catch(() => undefined);
    await expect(connection.callTool('never', {}, 50, never, 1)).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(settled).toBe(false);
    unhold();
    release();
    await expect(call).resolves.toMatchObject({ content: [{ type: 'text', text: 'answered' }] });
  });
});

type Wire = Record<string, unknown> & { id?: string | number; method?: string; params?: Record<string, unknown> };

/**
 * A server written by hand on the wire (the SDK's own server checks what its handlers
 * return, so it cannot send a broken result): it answers initialize and tools/list (one
 * tool, `echo`), and hands each tools/call to `answer` with a way to write any message back.
 */
function rawServer(answer: (request: Wire, write: (message: Wire) => void) => void): { factory: TransportFactory; received: Wire[] } {
  const received: Wire[] = [];
  const factory: TransportFactory = async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const write = (message: Wire): void => void serverSide.send(message as JSONRPCMessage);
    serverSide.onmessage = (message) => {
      const request = message as Wire;
      received.push(request);
      if (request.method === 'initialize') {
        write({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } });
      } else if (request.method === 'tools/list') write({ jsonrpc: '2.0', id: request.id, result: { tools: [tool('echo')] } });
      else if (request.method === 'tools/call') answer(request, write);
    };
    await serverSide.start();
    return transportLink(clientSide);
  };
  return { factory, received };
}

function connectTo(factory: TransportFactory): { connection: Connection; heard: Heard } {
  return connect(new InMemoryServers(), storedService('raw'), factory);
}

describe('Connection: tools/call on its own ids (CallChannel)', () => {
  it('sends each call with a string id the SDK never uses, and its progress token; the SDK still does everything else', async () => {
    const raw = rawServer((request, write) => write({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'ok' }] } }));
    const { connection } = connectTo(raw.factory);
    await connection.activate(never);
    await expect(connection.callTool('echo', { text: 'a' }, 10_000, never, 1)).resolves.toEqual({ content: [{ type: 'text', text: 'ok' }] });
    await expect(connection.callTool('echo', { text: 'b' }, 10_000, never, 1)).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    const calls = raw.received.filter((m) => m.method === 'tools/call');
    expect(calls.map((m) => m.id)).toEqual(['wispd-call-1', 'wispd-call-2']);
    expect(calls[0]?.params).toEqual({ name: 'echo', arguments: { text: 'a' }, _meta: { progressToken: 'wispd-call-1' } });
    expect(raw.received.filter((m) => m.method === 'initialize' || m.method === 'tools/list').every((m) => typeof m.id === 'number')).toBe(true);
  });

  it('refuses a result that is not a tool result (PROTOCOL_ERROR, saying where), and the connection goes on', async () => {
    const broken: Record<string, unknown>[] = [
      { content: 'text' },
      { content: [{ type: 'text', text: 42 }] },
      { content: [{ type: 'video', url: 'x' }] },
      { content: [], structuredContent: [1, 2] },
      { content: [], isError: 'yes' },
    ];
    let next = 0;
    const raw = rawServer((request, write) => write({ jsonrpc: '2.0', id: request.id, result: broken[next++] ?? {} }));
    const { connection, heard } = connectTo(raw.factory);
    await connection.activate(never);
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: "the server's answer to tools/call is not a tool result: /content must be array" });
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('/content/0 must match a schema in anyOf') });
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('/content/0 must match a schema in anyOf') });
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('/structuredContent must be object') });
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringContaining('/isError must be boolean') });
    // No content at all reads as none, as the SDK reads it.
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).resolves.toEqual({ content: [] });
    expect(heard.failures).toEqual([]);
  });

  it("takes the server's JSON-RPC error as its answer (TOOL_ERROR, code and message), and ignores answers to ids it never sent", async () => {
    const raw = rawServer((request, write) => {
      write({ jsonrpc: '2.0', id: 'wispd-call-99', result: { content: [{ type: 'text', text: 'forged' }] } });
      write({ jsonrpc: '2.0', id: request.id, error: { code: -32001, message: 'no such thing' } });
    });
    const { connection, heard } = connectTo(raw.factory);
    await connection.activate(never);
    await expect(connection.callTool('echo', {}, 10_000, never, 1)).rejects.toMatchObject({
      code: 'TOOL_ERROR',
      message: 'the server answered with an error (JSON-RPC -32001): no such thing',
      remote: { code: -32001, message: 'no such thing' },
    });
    expect(heard.failures).toEqual([]);
  });

  it('tells the server when a call is cancelled or times out (notifications/cancelled with its id), and drops a late answer', async () => {
    const unanswered: { request: Wire; write: (message: Wire) => void }[] = [];
    let arrived!: () => void;
    const running = new Promise<void>((resolve) => (arrived = resolve));
    const raw = rawServer((request, write) => {
      if (request.params?.arguments !== undefined && (request.params.arguments as { now?: boolean }).now === true) {
        write({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: `answer to ${String(request.id)}` }] } });
        return;
      }
      unanswered.push({ request, write });
      arrived();
    });
    const { connection, heard } = connectTo(raw.factory);
    await connection.activate(never);
    const controller = new AbortController();
    const cancelled = connection.callTool('echo', {}, 10_000, controller.signal, 1);
    await running;
    controller.abort('the client went away');
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(connection.callTool('echo', {}, 50, never, 1)).rejects.toMatchObject({ code: 'TIMEOUT', message: 'the server did not answer within 50 ms' });
    const notes = raw.received.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params);
    expect(notes).toEqual([
      { requestId: 'wispd-call-1', reason: 'the client went away' },
      { requestId: 'wispd-call-2', reason: expect.stringContaining('the server did not answer within 50 ms') },
    ]);
    // The answers come after all: nobody takes them, and the next call gets its own.
    for (const { request, write } of unanswered) write({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'late' }] } });
    await expect(connection.callTool('echo', { now: true }, 10_000, never, 1)).resolves.toEqual({ content: [{ type: 'text', text: 'answer to wispd-call-3' }] });
    expect(unanswered.map((u) => u.request.id)).toEqual(['wispd-call-1', 'wispd-call-2']);
    expect(heard.failures).toEqual([]);
  });
});
