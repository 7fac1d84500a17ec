import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcServer, WispClient, type MethodEntry, type RpcLogger } from '../../../src/control/index.js';
import { WispError } from '../../../src/core/index.js';
import { RawClient, tempDir } from '../../helpers/wispd.js';
import { until } from '../../helpers/wait.js';

/**
 * Issue 33, LOW 7 and 8, at the socket server: a real RpcServer on a real Unix socket with
 * small caps; what a client reads is what is asserted.
 */

const quiet: RpcLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const servers: RpcServer[] = [];
const dirs: { remove: () => void }[] = [];
const clients: { close(): unknown }[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const server of servers.splice(0)) {
    await server.stopAccepting(100);
    await server.closeConnections(100);
  }
  for (const dir of dirs.splice(0)) dir.remove();
});

const any = Type.Object({}, { additionalProperties: true });
/** Calls that wait until released. */
const waiting = new Set<() => void>();
const methods: Record<string, MethodEntry> = {
  ping: { paramsSchema: any, handle: () => 'pong' },
  join: { paramsSchema: any, handle: (params, ctx) => (ctx.connection.joinGateway(String((params as { id: unknown }).id)), 'joined') },
  wait: { paramsSchema: any, waits: true, handle: () => new Promise((resolve) => waiting.add(() => resolve('done'))) },
};

async function serve(options: Partial<ConstructorParameters<typeof RpcServer>[0]> = {}) {
  const dir = tempDir();
  dirs.push(dir);
  const server = new RpcServer({ methods, maxFrameBytes: 64 * 1024, maxBacklogBytes: 8 << 20, logger: quiet, ...options });
  servers.push(server);
  const socket = path.join(dir.path, 's.sock');
  await server.listen(socket);
  return { server, socket };
}

async function connect(socket: string): Promise<WispClient> {
  const client = await WispClient.connect(socket);
  clients.push(client);
  return client;
}

async function raw(socket: string): Promise<RawClient> {
  const client = await RawClient.connect(socket);
  clients.push(client);
  return client;
}

/** Polls the server's counts (each look a turn of the event loop apart) until `done`. */
async function untilLoad(server: RpcServer, done: (load: RpcServer['load']) => boolean): Promise<void> {
  await until(`the server's load to satisfy ${done.toString().replace(/\s+/g, ' ')}`, () => server.load, done, { everyMs: 5 });
}

/** A call of this test's own methods (not the daemon's: the typed client knows only those). */
function call(client: WispClient, method: 'ping' | 'join' | 'wait', params: object = {}): Promise<unknown> {
  return (client as unknown as { call(method: string, params: object): Promise<unknown> }).call(method, params);
}

/** The code and limit a call was refused with. */
function refusal(error: unknown): string {
  return error instanceof WispError ? `${error.code}:${String(error.details.limit)}` : String(error);
}

describe('RpcServer admission', () => {
  it('refuses a connection over maxConnections with one LIMIT_EXCEEDED and closes it; the others go on', async () => {
    const { server, socket } = await serve({ maxConnections: 2 });
    const a = await connect(socket);
    await connect(socket);
    const late = await raw(socket);
    await late.closed;
    expect(late.received).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'the daemon already has 2 socket connections open; close some and try again', data: { code: 'LIMIT_EXCEEDED', limit: 'maxConnections', max: 2 } },
      },
    ]);
    // The typed client says the same, whether its call went out before the refusal came or after.
    const third = await connect(socket);
    await expect(call(third, 'ping')).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxConnections', max: 2 } });
    await expect(call(third, 'ping')).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(await call(a, 'ping')).toBe('pong');
    expect(server.load.connections).toBe(2);
    await a.close();
    await untilLoad(server, (load) => load.connections === 1);
    expect(await call((await connect(socket)), 'ping')).toBe('pong');
  });

  it('fails the connection whose unfinished frame would pass the shared budget, and counts held bytes back to zero', async () => {
    const { server, socket } = await serve({ maxHeldFrameBytes: 50_000 });
    const holder = await raw(socket);
    holder.send('x'.repeat(40_000));
    await untilLoad(server, (load) => load.heldFrameBytes === 40_000);
    const second = await raw(socket);
    second.send('y'.repeat(20_000));
    await second.closed;
    expect(second.received).toMatchObject([{ id: null, error: { data: { code: 'LIMIT_EXCEEDED', limit: 'maxHeldFrameBytes', max: 50_000 } } }]);
    expect(server.load.heldFrameBytes).toBe(40_000);
    // A whole line needs no room: another client is served meanwhile.
    const bystander = await connect(socket);
    expect(await call(bystander, 'ping')).toBe('pong');
    holder.close();
    await untilLoad(server, (load) => load.heldFrameBytes === 0 && load.connections === 1);
  });

  it('counts a gateway\'s connections as one client for waiting calls, and keeps the reserve for the others', async () => {
    const { server, socket } = await serve({ maxPendingCallsPerClient: 2, maxPendingCalls: 5, maxGatewayPendingCalls: 3 });
    const [one, two, other] = [await connect(socket), await connect(socket), await connect(socket)];
    for (const c of [one, two]) expect(await call(c, 'join', { id: 'gateway-one' })).toBe('joined');
    const outcomes = [one, two, two].map((c) => call(c, 'wait').then(String, refusal));
    expect(await outcomes[2]).toBe('LIMIT_EXCEEDED:maxPendingCallsPerClient');
    expect(await call(other, 'join', { id: 'gateway-two' })).toBe('joined');
    const third = [call(other, 'wait').then(String, refusal), call(other, 'wait').then(String, refusal)];
    expect(await third[1]).toBe('LIMIT_EXCEEDED:maxGatewayPendingCalls');
    // A client that is not a gateway gets the rest.
    const mine = await connect(socket);
    const own = [call(mine, 'wait').then(String, refusal), call(mine, 'wait').then(String, refusal)];
    await untilLoad(server, (load) => load.pendingCalls === 5);
    expect(server.load).toMatchObject({ gateways: 2, gatewayConnections: 3, gatewayPendingCalls: 3, pendingCalls: 5 });
    for (const release of waiting) release();
    waiting.clear();
    expect(await Promise.all(own)).toEqual(['done', 'done']);
    expect(await third[0]).toBe('done');
    await untilLoad(server, (load) => load.pendingCalls === 0 && load.gatewayPendingCalls === 0);
  });

  it('refuses a gateway\'s connection over its cap with LIMIT_EXCEEDED, then closes it', async () => {
    const { server, socket } = await serve({ maxConnectionsPerGateway: 1 });
    const first = await connect(socket);
    expect(await call(first, 'join', { id: 'g' })).toBe('joined');
    const second = await connect(socket);
    const closed = new Promise<void>((resolve) => second.onClose(() => resolve()));
    await expect(call(second, 'join', { id: 'g' })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxConnectionsPerGateway', max: 1 } });
    await closed;
    await untilLoad(server, (load) => load.connections === 1 && load.gatewayConnections === 1);
    // A second join on one connection is refused, and it stays open.
    await expect(call(first, 'join', { id: 'h' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    expect(await call(first, 'ping')).toBe('pong');
    await first.close();
    await untilLoad(server, (load) => load.gateways === 0 && load.connections === 0);
  });

  it('refuses to join a gateway after a call started on that connection', async () => {
    const { socket } = await serve();
    const c = await connect(socket);
    const waitingCall = call(c, 'wait');
    await expect(call(c, 'join', { id: 'g' })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: 'a connection names its gateway before its first call' });
    for (const release of waiting) release();
    waiting.clear();
    expect(await waitingCall).toBe('done');
  });
});
