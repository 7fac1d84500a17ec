import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InitializeRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CallClock } from '../../../src/mcp/call-clock.js';
import { Connection, MAX_TOOL_PAGES, type ConnectionHooks } from '../../../src/mcp/connection.js';
import { StderrTail } from '../../../src/mcp/stderr-tail.js';
import type { CatalogTool, Failure, StoredService } from '../../../src/mcp/index.js';
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

function connect(servers: InMemoryServers, config: StoredService): { connection: Connection; heard: Heard } {
  const heard = new Heard();
  const connection = new Connection(config, 1, heard, {
    version: '0.0.0-test',
    ladder: { stdinGraceMs: 1000, termGraceMs: 1000 },
    stderr: new StderrTail(1024),
    searchPath: undefined,
    env: {},
    redact: (text) => text,
    transports: servers.factory,
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
    expect(heard.lists).toEqual([{ names, version: 1, server: { name: 'in-memory', version: '1.2.3' } }]);
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
