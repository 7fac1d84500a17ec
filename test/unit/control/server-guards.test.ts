import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { EventHub, RpcServer, type CallContext, type MethodEntry, type RpcLogger } from '../../../src/control/index.js';
import type { EventPayload } from '../../../src/core/index.js';
import { RawClient, tempDir } from '../../helpers/wispd.js';

/**
 * The socket server under hostile clients (issue 12, item 6 and 14): a real server on a real
 * Unix socket; what a client sees is what is asserted.
 */

interface Logged {
  level: string;
  obj: Record<string, unknown>;
  msg?: string;
}

function recordingLogger(): RpcLogger & { lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const FRAME = 64 * 1024;
const servers: RpcServer[] = [];
const dirs: { remove: () => void }[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await server.stopAccepting(100);
    await server.closeConnections(100);
  }
  for (const dir of dirs.splice(0)) dir.remove();
});

type Options = Partial<Omit<ConstructorParameters<typeof RpcServer>[0], 'methods' | 'logger'>>;

async function serve(methods: Record<string, MethodEntry>, options: Options = {}) {
  const dir = tempDir();
  dirs.push(dir);
  const logger = recordingLogger();
  const server = new RpcServer({ methods, maxFrameBytes: FRAME, maxBacklogBytes: 8 << 20, logger, ...options });
  servers.push(server);
  const socket = path.join(dir.path, 's.sock');
  await server.listen(socket);
  return { server, socket, logger, client: await RawClient.connect(socket) };
}

const any = Type.Object({}, { additionalProperties: true });
const ping: MethodEntry = { paramsSchema: any, handle: () => 'pong' };

/** Frames as they arrived, for checking their size. */
function lines(client: RawClient): string[] {
  return client.raw.split('\n').filter((line) => line !== '');
}

/** The connection still serves: a ping gets its pong. */
async function stillServes(client: RawClient, id = 999): Promise<void> {
  const before = client.received.length;
  client.request(id, 'ping');
  const all = await client.waitFor(before + 1);
  expect(all.at(-1)).toEqual({ jsonrpc: '2.0', id, result: 'pong' });
}

describe('RpcServer batches', () => {
  it('refuses a batch over the limit with one LIMIT_EXCEEDED, running nothing in it', async () => {
    let runs = 0;
    const { client } = await serve({ ping, count: { paramsSchema: any, handle: () => ++runs } }, { maxFrameBytes: 1 << 20 });
    const batch = Array.from({ length: 2500 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'count' }));
    client.send(`${JSON.stringify(batch)}\n`);
    const [reply] = await client.waitFor(1);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'LIMIT_EXCEEDED', limit: 'maxBatchRequests', max: 64 } } });
    expect(runs).toBe(0);
    // 64 is allowed, and answered as one batch.
    client.send(`${JSON.stringify(batch.slice(0, 64))}\n`);
    const all = await client.waitFor(2);
    expect(all[1]).toHaveLength(64);
    expect(runs).toBe(64);
    await stillServes(client);
  });

  it('keeps a batch answer within the frame cap: answers that do not fit in what is left become REPLY_TOO_LARGE, the rest arrive', async () => {
    const { client } = await serve({
      ping,
      big: { paramsSchema: any, handle: () => 'x'.repeat(20_000) },
    });
    const batch = [...Array.from({ length: 10 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'big' })), { jsonrpc: '2.0', id: 'small', method: 'ping' }];
    client.send(`${JSON.stringify(batch)}\n`);
    const [answer] = (await client.waitFor(1)) as { id: unknown; result?: unknown; error?: { data: { code: string } } }[][];
    expect(Buffer.byteLength(lines(client)[0] ?? '')).toBeLessThan(FRAME);
    expect(answer).toHaveLength(11);
    const ok = answer?.filter((r) => r.result !== undefined) ?? [];
    const refused = answer?.filter((r) => r.error?.data.code === 'REPLY_TOO_LARGE') ?? [];
    expect(ok.length + refused.length).toBe(11);
    expect(ok.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(ok.map((r) => r.id)).toContain('small');
    await stillServes(client);
  });
});

describe('RpcServer serialisation guard', () => {
  it.each<[string, () => unknown]>([
    ['a BigInt', () => ({ n: 10n })],
    ['a cycle', () => {
      const loop: Record<string, unknown> = {};
      loop.self = loop;
      return loop;
    }],
    ['a string over the frame cap', () => 'y'.repeat(FRAME)],
    ['nesting too deep for JSON.stringify', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 1_000_000; i++) deep = [deep];
      return deep;
    }],
  ])('answers REPLY_TOO_LARGE for a result with %s, and the connection goes on', async (_name, make) => {
    const { client, logger } = await serve({ ping, bad: { paramsSchema: any, handle: make } });
    client.request(1, 'bad');
    const [reply] = await client.waitFor(1);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 1, error: { data: { code: 'REPLY_TOO_LARGE' } } });
    expect(logger.lines.some((l) => l.obj.code === 'REPLY_TOO_LARGE')).toBe(true);
    await stillServes(client);
  });

  it.each<[string, () => unknown]>([
    ['a BigInt', () => ({ n: 10n })],
    ['a string over the frame cap', () => ({ content: [{ type: 'text', text: 'y'.repeat(FRAME) }] })],
    ['nesting too deep for JSON.stringify', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 1_000_000; i++) deep = [deep];
      return deep;
    }],
  ])('answers REPLY_TOO_LARGE for a bounded result (serialised without the count) with %s', async (_name, make) => {
    const { client, logger } = await serve({ ping, bad: { paramsSchema: any, boundedResult: true, handle: () => Promise.resolve(make()) } });
    client.request(1, 'bad');
    const [reply] = await client.waitFor(1);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 1, error: { data: { code: 'REPLY_TOO_LARGE' } } });
    expect(logger.lines.some((l) => l.obj.code === 'REPLY_TOO_LARGE')).toBe(true);
    await stillServes(client);
  });

  it('answers REPLY_TOO_LARGE for an async result too', async () => {
    const { client } = await serve({ ping, bad: { paramsSchema: any, handle: () => Promise.resolve({ n: 1n }) } });
    client.request(7, 'bad');
    expect((await client.waitFor(1))[0]).toMatchObject({ id: 7, error: { data: { code: 'REPLY_TOO_LARGE' } } });
    await stillServes(client);
  });

  it('drops an event that cannot be sent, with a log line, and sends the ones after it', async () => {
    const { server, client, logger } = await serve({
      ping,
      subscribe: { paramsSchema: any, handle: (_p: unknown, ctx: CallContext) => ((ctx.connection.subscribed = true), 'ok') },
    });
    client.request(1, 'subscribe');
    await client.waitFor(1);
    // Wired as the daemon wires its hub (src/daemon/daemon.ts); this hub takes events up to
    // twice the connection's frame cap, so the connection's own check is seen too.
    const hub = new EventHub(16, () => new Date(0), { maxBytes: 1 << 20, maxEventBytes: 2 * FRAME });
    hub.onEvent((_event, emitted) => server.broadcastEvent(emitted));
    hub.onRefused((event) => logger.warn({ code: 'REPLY_TOO_LARGE', method: 'event', seq: event.seq, type: event.type }, 'not sent'));
    const emit = (payload: Record<string, unknown>) => hub.emit(payload as unknown as EventPayload);
    emit({ type: 'huge', text: 'z'.repeat(2 * FRAME) });
    emit({ type: 'bigint', n: 1n });
    emit({ type: 'over-the-frame', text: 'z'.repeat(FRAME) });
    emit({ type: 'fine' });
    emit({ type: 'after' });
    const all = await client.waitFor(3);
    expect(all.slice(1)).toEqual([
      { jsonrpc: '2.0', method: 'event', params: { type: 'fine', seq: 4, at: '1970-01-01T00:00:00.000Z' } },
      { jsonrpc: '2.0', method: 'event', params: { type: 'after', seq: 5, at: '1970-01-01T00:00:00.000Z' } },
    ]);
    // The hub refuses what it cannot serialise or is over its cap; the connection leaves out what is over its frame cap.
    expect(logger.lines.filter((l) => l.obj.code === 'REPLY_TOO_LARGE').map((l) => l.obj.seq)).toEqual([1, 2]);
    await stillServes(client);
  });

  it('a step after the response that throws is logged; the daemon and the connection go on', async () => {
    const { client, logger } = await serve({
      ping,
      after: {
        paramsSchema: any,
        handle: (_p: unknown, ctx: CallContext) => {
          ctx.afterResponse(() => {
            throw new Error('boom after');
          });
          return 'answered';
        },
      },
    });
    client.request(1, 'after');
    expect((await client.waitFor(1))[0]).toEqual({ jsonrpc: '2.0', id: 1, result: 'answered' });
    await stillServes(client);
    expect(logger.lines.some((l) => l.level === 'error' && String(l.obj.err).includes('boom after'))).toBe(true);
  });
});

describe('RpcServer caps on pending calls', () => {
  it('caps one client\'s calls that wait, and every client\'s together; other methods still answer', async () => {
    const waiting: (() => void)[] = [];
    const methods = {
      ping,
      wait: { paramsSchema: any, waits: true, handle: () => new Promise<string>((resolve) => waiting.push(() => resolve('done'))) },
    };
    const { client, socket } = await serve(methods, { maxPendingCallsPerClient: 4, maxPendingCalls: 6 });
    for (let i = 1; i <= 5; i++) client.request(i, 'wait');
    const [fifth] = (await client.waitFor(1));
    expect(fifth).toMatchObject({ id: 5, error: { data: { code: 'LIMIT_EXCEEDED', limit: 'maxPendingCallsPerClient', max: 4 } } });
    expect(waiting).toHaveLength(4);

    const other = await RawClient.connect(socket);
    for (let i = 1; i <= 3; i++) other.request(i, 'wait');
    const [third] = (await other.waitFor(1));
    expect(third).toMatchObject({ id: 3, error: { data: { code: 'LIMIT_EXCEEDED', limit: 'maxPendingCalls', max: 6 } } });
    expect(waiting).toHaveLength(6);
    // Full, the server still answers what does not wait.
    await stillServes(other, 50);

    // Answered requests free their places.
    for (const done of waiting.splice(0)) done();
    await client.waitFor(5);
    await other.waitFor(4);
    await stillServes(client);
    other.request(10, 'wait');
    other.request(11, 'ping');
    expect((await other.waitFor(5))[4]).toEqual({ jsonrpc: '2.0', id: 11, result: 'pong' });
    expect(waiting).toHaveLength(1);
    for (const done of waiting.splice(0)) done();
    expect((await other.waitFor(6))[5]).toEqual({ jsonrpc: '2.0', id: 10, result: 'done' });
    other.close();
  });
});

describe('RpcServer and deep nesting', () => {
  /** JSON text of an object `depth` levels deep (built as text: the test's own JSON.stringify would overflow). */
  function nested(depth: number): string {
    return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  }
  const request = (id: number, method: string, args: string): string => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{"arguments":${args}}}\n`;

  it('refuses params nesting deeper than 64 before the schema or the handler sees them', async () => {
    let runs = 0;
    const entry: MethodEntry = {
      paramsSchema: Type.Object({ arguments: Type.Object({}, { additionalProperties: true }) }),
      handle: () => ++runs,
    };
    const { client } = await serve({ ping, call: { ...entry, tooDeep: 'INVALID_ARGUMENTS' }, other: entry });
    client.send(request(1, 'call', nested(64)));
    client.send(request(2, 'call', nested(65)));
    client.send(request(3, 'call', nested(10_000)));
    client.send(request(4, 'other', nested(10_000)));
    const replies = await client.waitFor(4);
    expect(replies[0]).toEqual({ jsonrpc: '2.0', id: 1, result: 1 });
    for (const [i, code] of [[1, 'INVALID_ARGUMENTS'], [2, 'INVALID_ARGUMENTS'], [3, 'INVALID_PARAMS']] as const) {
      expect(replies[i]).toMatchObject({ id: i + 1, error: { data: { code, limit: 'maxArgumentDepth', max: 64, path: '/arguments' } } });
    }
    expect(runs).toBe(1);
    await stillServes(client);
  });

  it('answers frames of deep nesting anywhere without overflowing the stack; a frame past maxFrameNesting is refused unparsed', async () => {
    const { client } = await serve({ ping }, { maxFrameBytes: 1 << 20 });
    const depth = 400_000;
    client.send(`${'['.repeat(depth)}${']'.repeat(depth)}\n`);
    client.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":${'['.repeat(depth)}${']'.repeat(depth)}}}\n`);
    client.send(`[${Array.from({ length: 64 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"ping","params":{"p":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}}`).join(',')}]\n`);
    client.send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"p":${'['.repeat(16_000)}${']'.repeat(16_000)}}}\n`);
    const replies = await client.waitFor(4);
    // Deeper than maxFrameNesting: refused on its text, never parsed (so no id can be known).
    expect(replies[0]).toMatchObject({ id: null, error: { data: { code: 'INVALID_REQUEST', limit: 'maxFrameNesting' } } });
    expect(replies[1]).toMatchObject({ id: null, error: { data: { code: 'INVALID_REQUEST', limit: 'maxFrameNesting' } } });
    expect(replies[2]).toHaveLength(64);
    expect((replies[2] as { error: { data: { code: string } } }[]).every((r) => r.error.data.code === 'INVALID_PARAMS')).toBe(true);
    // Under it: parsed, and answered with its id and the precise code.
    expect(replies[3]).toMatchObject({ id: 2, error: { data: { code: 'INVALID_PARAMS', limit: 'maxArgumentDepth' } } });
    await stillServes(client);
  });
});
