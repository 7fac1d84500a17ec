import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { WispError } from '../../../src/core/index.js';
import { AuthRequired, Supervisor, type McpEvent, type StoredService, type TransportFactory } from '../../../src/mcp/index.js';
import { InMemoryServers, storedService, tool, toolServer } from './in-memory.js';

/** Every event the supervisor published, with a way to wait for one still to come. */
class Emitted {
  readonly events: McpEvent[] = [];
  private waiters: { match: (e: McpEvent) => boolean; resolve: () => void }[] = [];

  readonly publish = (event: McpEvent): void => {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => !w.match(event) || (w.resolve(), false));
  };

  next(match: (e: McpEvent) => boolean): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The states a service went through, as status/phase. */
  states(id: string): string[] {
    return this.events.flatMap((e) =>
      e.kind === 'connection.changed' && e.service.id === id ? [e.state.status === 'activating' ? `activating/${e.state.phase}` : e.state.status] : [],
    );
  }
}

function supervisor(transports: TransportFactory): { supervisor: Supervisor; emitted: Emitted; stops: string[] } {
  const emitted = new Emitted();
  const stops: string[] = [];
  const sup = new Supervisor({
    version: '0.0.0-test',
    ladder: { stdinGraceMs: 1000, termGraceMs: 1000 },
    searchPath: undefined,
    publish: emitted.publish,
    redact: (text) => text,
    now: () => new Date(),
    onStop: (id, reason) => stops.push(`${id}: ${reason}`),
    transports,
  });
  return { supervisor: sup, emitted, stops };
}

const never = new AbortController().signal;

function growing(): { servers: InMemoryServers; mcp: () => McpServer } {
  let latest: McpServer | undefined;
  const servers = new InMemoryServers().add('growing', () => {
    latest = new McpServer({ name: 'growing', version: '2.0.0' });
    latest.registerTool('first', { description: 'the first tool' }, () => ({ content: [{ type: 'text', text: 'one' }] }));
    return latest;
  });
  return {
    servers,
    mcp: () => {
      if (latest === undefined) throw new Error('not activated');
      return latest;
    },
  };
}

describe('Supervisor (in-memory servers)', () => {
  it('activates to active with the tool list, announcing each step', async () => {
    const { servers } = growing();
    const { supervisor: sup, emitted } = supervisor(servers.factory);
    const config = storedService('growing');
    const state = await sup.activate(config, 1, never);
    expect(state).toMatchObject({ status: 'active', generation: 1, pid: null, toolCount: 1, toolListVersion: 1, server: { name: 'growing', version: '2.0.0' } });
    expect(emitted.states(config.id)).toEqual(['activating/spawning', 'activating/initializing', 'activating/discovering', 'active']);
    expect(sup.tools(config.id).map((t) => [t.name, t.serviceName, t.generation])).toEqual([['first', 'growing', 1]]);
    expect(emitted.events).toContainEqual({ kind: 'tools.discovered', service: { id: config.id, name: 'growing' }, toolListVersion: 1, toolCount: 1 });
    expect(sup.runningCount).toBe(1);
    await sup.stopAll();
  });

  it('follows tools/list_changed: catalog, state and events move to the next tool-list version', async () => {
    const { servers, mcp } = growing();
    const { supervisor: sup, emitted } = supervisor(servers.factory);
    const config = storedService('growing');
    await sup.activate(config, 1, never);
    const refreshed = emitted.next((e) => e.kind === 'tools.discovered' && e.toolListVersion === 2);
    mcp().registerTool('second', { description: 'the second tool' }, () => ({ content: [{ type: 'text', text: 'two' }] }));
    await refreshed;
    expect(sup.state(config.id)).toMatchObject({ status: 'active', toolListVersion: 2, toolCount: 2 });
    // The new tool is held (not pinned when the service was trusted): listed, not in the trusted catalog.
    expect(sup.tools(config.id).map((t) => [t.name, t.toolListVersion])).toEqual([['first', 2]]);
    expect(sup.listed(config.id).map((t) => [t.name, t.toolListVersion, t.pin])).toEqual([
      ['first', 2, 'trusted'],
      ['second', 2, 'added'],
    ]);
    expect(emitted.events).toContainEqual({ kind: 'tools.held', service: { id: config.id, name: 'growing' }, toolListVersion: 2, added: ['second'], changed: [] });
    await sup.stopAll();
  });

  it('ends failed PROTOCOL_ERROR when the server refuses initialize, with nothing in the catalog', async () => {
    const servers = new InMemoryServers().add('refuses', () => {
      const { server } = toolServer([tool('never-listed')]);
      server.server.setRequestHandler(InitializeRequestSchema, () => {
        throw new Error('not today');
      });
      return server;
    });
    const { supervisor: sup, emitted } = supervisor(servers.factory);
    const config = storedService('refuses');
    const state = await sup.activate(config, 1, never);
    expect(state).toMatchObject({ status: 'failed', code: 'PROTOCOL_ERROR', message: expect.stringContaining('not today') });
    expect(emitted.states(config.id)).toEqual(['activating/spawning', 'activating/initializing', 'failed']);
    expect(sup.tools()).toEqual([]);
  });

  it('ends failed SCHEMA_INVALID when a schema cannot compile, and activates nothing of that server', async () => {
    const bad = { name: 'bad-schema', inputSchema: { type: 'object', properties: { x: { type: 'nonsense' } } } } as const;
    const servers = new InMemoryServers().add('uncompilable', () => toolServer([tool('fine'), bad]).server);
    const { supervisor: sup } = supervisor(servers.factory);
    const config = storedService('uncompilable');
    const state = await sup.activate(config, 1, never);
    expect(state).toMatchObject({ status: 'failed', code: 'SCHEMA_INVALID', message: expect.stringContaining('"bad-schema"') });
    expect(sup.tools()).toEqual([]);
  });

  it('stops: tools withdrawn, the users told why, the server sees the close, state disabled', async () => {
    let closes = 0;
    const servers = new InMemoryServers().add('stoppable', () => {
      const { server } = toolServer([tool('echo')]);
      server.server.onclose = () => (closes += 1);
      return server;
    });
    const { supervisor: sup, emitted, stops } = supervisor(servers.factory);
    const config = storedService('stoppable');
    await sup.activate(config, 1, never);
    expect(await sup.stop(config.id, false, 'disabled by a test')).toMatchObject({ status: 'disabled' });
    expect(emitted.states(config.id).slice(-2)).toEqual(['stopping', 'disabled']);
    expect(sup.tools()).toEqual([]);
    expect(stops).toEqual([`${config.id}: disabled by a test`]);
    expect(closes).toBe(1);
    // A new activation is a new generation, with the tools bound to it.
    expect(await sup.activate(config, 1, never)).toMatchObject({ status: 'active', generation: 2 });
    expect(sup.tools(config.id).map((t) => t.generation)).toEqual([2]);
    await sup.stopAll();
  });

  it('marks an active service failed SERVER_EXITED when its server goes away, and withdraws its tools', async () => {
    const served = toolServer([tool('echo')]);
    const servers = new InMemoryServers().add('leaving', () => served.server);
    const { supervisor: sup, emitted } = supervisor(servers.factory);
    const config = storedService('leaving');
    await sup.activate(config, 1, never);
    const failed = emitted.next((e) => e.kind === 'connection.changed' && e.state.status === 'failed');
    await served.server.close();
    await failed;
    expect(sup.state(config.id)).toMatchObject({ status: 'failed', code: 'SERVER_EXITED' });
    expect(sup.tools()).toEqual([]);
  });

  it('refuses an activation bound to an older configVersion: APPROVAL_STALE, nothing started', async () => {
    const servers = new InMemoryServers().add('edited', () => toolServer([tool('echo')]).server);
    const { supervisor: sup } = supervisor(servers.factory);
    const config: StoredService = storedService('edited', { configVersion: 3 });
    await expect(sup.activate(config, 2, never)).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    expect(servers.opened.get('edited')).toBeUndefined();
    expect(sup.state(config.id).status).toBe('disabled');
  });

  it.each<[string, Error, { authorizationServer: string | null; scope: string | null }]>([
    ['an AuthRequired with where to log in', new AuthRequired('log in first', 'https://auth.example', 'tools:read'), { authorizationServer: 'https://auth.example', scope: 'tools:read' }],
    ['a NEEDS_AUTH error from below', new WispError('NEEDS_AUTH', 'log in first'), { authorizationServer: null, scope: null }],
  ])('waits in needs_auth for %s (decided by type)', async (_what, error, where) => {
    const { supervisor: sup } = supervisor(() => Promise.reject(error));
    const config = storedService('protected', { transport: 'http', command: '', url: 'https://mcp.example/mcp' });
    expect(await sup.activate(config, 1, never)).toMatchObject({ status: 'needs_auth', message: 'log in first', ...where });
  });
});
