import net from 'node:net';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmittedEvent, RpcServer, type CallContext, type RpcLogger } from '../../../src/control/index.js';
import { WispError, type WispEvent } from '../../../src/core/index.js';
import { Redactor } from '../../../src/secrets/index.js';
import { RawClient, tempDir } from '../../helpers/wispd.js';
import type { CallSignal } from '../../../src/util/index.js';

const serializeEvent = (event: WispEvent) => {
  const text = JSON.stringify(event);
  return { text, bytes: Buffer.byteLength(text) };
};

interface Logged {
  level: string;
  obj: object;
  msg?: string;
}

function recordingLogger(): RpcLogger & { lines: Logged[]; next: (level: string) => Promise<Logged> } {
  const lines: Logged[] = [];
  const waiters: { level: string; resolve: (l: Logged) => void }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    const line = { level, obj, msg };
    lines.push(line);
    for (const w of waiters.splice(0)) if (w.level === level) w.resolve(line); else waiters.push(w);
  };
  const next = (level: string) => new Promise<Logged>((resolve) => waiters.push({ level, resolve }));
  return { lines, next, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const servers: RpcServer[] = [];
const dirs: { remove: () => void }[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await server.stopAccepting(100);
    await server.closeConnections(100);
  }
  for (const dir of dirs.splice(0)) dir.remove();
});

async function serve(methods: ConstructorParameters<typeof RpcServer>[0]['methods'], maxBacklogBytes = 1 << 20, redactor?: Redactor) {
  const dir = tempDir();
  dirs.push(dir);
  const logger = recordingLogger();
  const server = new RpcServer({ methods, maxFrameBytes: 1 << 20, maxBacklogBytes, logger, ...(redactor === undefined ? {} : { redactor }) });
  servers.push(server);
  const socket = path.join(dir.path, 's.sock');
  await server.listen(socket);
  return { server, socket, logger };
}

describe('RpcServer', () => {
  it('redacts a known secret value in every answer and notification as it is serialised, whichever handler made it', async () => {
    const redactor = new Redactor();
    const secret = 'hunter2-"quoted"-value';
    redactor.hold('service:x/TOKEN', 'TOKEN', secret);
    const { socket } = await serve(
      {
        leak: { paramsSchema: Type.Object({}), handle: () => ({ text: `before ${secret} after`, [secret]: 'as a key', list: [secret] }) },
        leakLater: { paramsSchema: Type.Object({}), handle: () => Promise.resolve({ text: secret }) },
        fail: { paramsSchema: Type.Object({}), handle: () => { throw new WispError('TOOL_ERROR', `the server said ${secret}`, { echoed: secret }); } },
        shout: {
          paramsSchema: Type.Object({}),
          handle: (_params: unknown, ctx: CallContext) => {
            ctx.connection.notify('note', { said: secret });
            return 'ok';
          },
        },
        plain: { paramsSchema: Type.Object({}), handle: () => ({ text: 'nothing to hide' }) },
        // Serialised without the guard's count (a tool call's answer): redacted all the same.
        bounded: { paramsSchema: Type.Object({}), boundedResult: true, handle: () => Promise.resolve({ content: [{ type: 'text', text: `got ${secret}` }], [secret]: 1 }) },
      },
      1 << 20,
      redactor,
    );
    const client = await RawClient.connect(socket);
    client.request(1, 'leak');
    client.request(2, 'leakLater');
    client.request(3, 'fail');
    client.request(4, 'shout');
    client.request(5, 'plain');
    client.request(6, 'bounded');
    const messages = await client.waitFor(7);
    const byId = (id: number) => messages.find((m) => (m as { id?: number }).id === id);
    expect(byId(1)).toEqual({ jsonrpc: '2.0', id: 1, result: { text: 'before [REDACTED:TOKEN] after', '[REDACTED:TOKEN]': 'as a key', list: ['[REDACTED:TOKEN]'] } });
    expect(byId(2)).toEqual({ jsonrpc: '2.0', id: 2, result: { text: '[REDACTED:TOKEN]' } });
    expect(byId(3)).toMatchObject({ id: 3, error: { message: 'the server said [REDACTED:TOKEN]', data: { code: 'TOOL_ERROR', echoed: '[REDACTED:TOKEN]' } } });
    expect(messages).toContainEqual({ jsonrpc: '2.0', method: 'note', params: { said: '[REDACTED:TOKEN]' } });
    expect(byId(5)).toEqual({ jsonrpc: '2.0', id: 5, result: { text: 'nothing to hide' } });
    expect(byId(6)).toEqual({ jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'got [REDACTED:TOKEN]' }], '[REDACTED:TOKEN]': 1 } });
    // Nor escaped, as JSON writes it: nothing of the value went out.
    expect(client.raw).not.toContain('hunter2');
    client.close();
  });

  it('sends an answer that fits only once redacted, and a refusal never tells the unredacted size', async () => {
    const redactor = new Redactor();
    // 300 characters, 600 bytes: under the guard's count of characters, over the frame in bytes.
    const secret = 'é'.repeat(300);
    redactor.hold('service:x/KEY', 'KEY', secret);
    const dir = tempDir();
    dirs.push(dir);
    const server = new RpcServer({
      methods: {
        fits: { paramsSchema: Type.Object({}), handle: () => ({ text: `a ${secret} b` }) },
        // Redacted still too large (155 three-byte characters): refused, with the size of the redacted answer.
        failsToo: { paramsSchema: Type.Object({}), handle: () => ({ text: `${secret}${'€'.repeat(155)}` }) },
      },
      maxFrameBytes: 512,
      maxBacklogBytes: 1 << 20,
      logger: recordingLogger(),
      redactor,
    });
    servers.push(server);
    const socket = path.join(dir.path, 's.sock');
    await server.listen(socket);
    const client = await RawClient.connect(socket);
    client.request(1, 'fits');
    client.request(2, 'failsToo');
    const [fits, fails] = (await client.waitFor(2)) as { id: number; result?: unknown; error?: { message: string } }[];
    expect(fits).toEqual({ jsonrpc: '2.0', id: 1, result: { text: 'a [REDACTED:KEY] b' } });
    expect(fails).toMatchObject({ id: 2, error: { data: { code: 'REPLY_TOO_LARGE' } } });
    // The redacted answer's size (about 520 bytes), not the unredacted one's (about 1,110: it would tell the secret's length).
    const size = Number(/it is (\d+) bytes/.exec(fails?.error?.message ?? '')?.[1]);
    expect(size).toBeGreaterThan(511);
    expect(size).toBeLessThan(600);
    client.close();
  });

  it('writes a deferred answer in its place among the turn\'s frames, redacted even when its secret is let go later in that turn', async () => {
    const redactor = new Redactor();
    const secret = 'deferred-secret-value-42';
    redactor.hold('service:x/TOKEN', 'TOKEN', secret);
    const { socket } = await serve(
      {
        // As approvals.respond: its answer is serialised when the turn's frames are written.
        later: { paramsSchema: Type.Object({}), boundedResult: true, deferredResult: true, handle: () => ({ text: `before ${secret} after` }) },
        shout: {
          paramsSchema: Type.Object({}),
          handle: (_params: unknown, ctx: CallContext) => {
            ctx.connection.notify('note', { n: 1 });
            return 'ok';
          },
        },
        letGo: {
          paramsSchema: Type.Object({}),
          handle: () => {
            redactor.release('service:x/TOKEN');
            return 'gone';
          },
        },
      },
      1 << 20,
      redactor,
    );
    const client = await RawClient.connect(socket);
    const frame = (id: number, method: string) => `${JSON.stringify({ jsonrpc: '2.0', id, method })}\n`;
    // One write: the three frames are handled in one turn, and the value is let go before that turn's frames are written.
    client.send(`${frame(1, 'later')}${frame(2, 'shout')}${frame(3, 'letGo')}`);
    const messages = await client.waitFor(4);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, result: { text: 'before [REDACTED:TOKEN] after' } },
      { jsonrpc: '2.0', method: 'note', params: { n: 1 } },
      { jsonrpc: '2.0', id: 2, result: 'ok' },
      { jsonrpc: '2.0', id: 3, result: 'gone' },
    ]);
    expect(client.raw).not.toContain(secret);
    // Let go, the value is no longer looked for: a later answer shows it (so the one above was redacted because it was serialised in time).
    client.request(4, 'later');
    expect((await client.waitFor(5))[4]).toEqual({ jsonrpc: '2.0', id: 4, result: { text: `before ${secret} after` } });
    // In a batch, a deferred answer is serialised with the batch's others.
    client.send(`[${frame(5, 'later').trim()},${frame(6, 'shout').trim()}]\n`);
    expect((await client.waitFor(7)).slice(5)).toEqual([
      { jsonrpc: '2.0', method: 'note', params: { n: 1 } },
      [
        { jsonrpc: '2.0', id: 5, result: { text: `before ${secret} after` } },
        { jsonrpc: '2.0', id: 6, result: 'ok' },
      ],
    ]);
    client.close();
  });

  it('checks a held event again as it is replayed: a value may have become known since it was emitted', async () => {
    const redactor = new Redactor();
    const held = JSON.stringify({ type: 'x', said: 'later-known-value-123' });
    const { socket } = await serve(
      {
        replay: {
          paramsSchema: Type.Object({}),
          handle: (_params: unknown, ctx: CallContext) => {
            ctx.connection.notifySerialized('event', held);
            return 'ok';
          },
        },
      },
      1 << 20,
      redactor,
    );
    redactor.hold('service:x/LATE', 'LATE', 'later-known-value-123');
    const client = await RawClient.connect(socket);
    client.request(1, 'replay');
    const messages = await client.waitFor(2);
    expect(messages).toContainEqual({ jsonrpc: '2.0', method: 'event', params: { type: 'x', said: '[REDACTED:LATE]' } });
    expect(client.raw).not.toContain('later-known');
    client.close();
  });

  it.each(['signal', 'callSignal'] as const)('aborts a request\'s work when its client disconnects mid-request (ctx.%s)', async (kind) => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const aborted = new Promise<unknown>((resolve) => {
      void serveBlocking(resolve);
    });
    async function serveBlocking(onAbort: (reason: unknown) => void): Promise<void> {
      const { socket } = await serve({
        'work.wait': {
          paramsSchema: Type.Object({}),
          handle: (_params: unknown, ctx: CallContext) =>
            new Promise((_resolve, reject) => {
              started();
              const signal = ctx[kind];
              signal.addEventListener('abort', () => {
                onAbort(signal.reason);
                reject(signal.reason as Error);
              });
            }),
        },
      });
      const client = await RawClient.connect(socket);
      client.request(1, 'work.wait');
      await running;
      client.close();
    }
    expect(await aborted).toMatchObject({ code: 'CANCELLED' });
  });

  it('drops a client that stops reading once its backlog passes the limit, and serves the others', async () => {
    const { server, socket, logger } = await serve(
      {
        'flood.start': {
          paramsSchema: Type.Object({}),
          handle: (_params: unknown, ctx: CallContext) => {
            const chunk = 'x'.repeat(1024);
            for (let i = 0; i < 512; i++) ctx.connection.notify('flood', { i, chunk });
            return { sent: 512 };
          },
        },
        ping: { paramsSchema: Type.Object({}), handle: () => 'pong' },
      },
      64 * 1024,
    );
    const slow = net.createConnection(socket);
    await new Promise((resolve) => slow.once('connect', resolve));
    slow.pause(); // never reads
    slow.on('error', () => undefined);
    const warned = logger.next('warn');
    slow.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'flood.start' })}\n`);
    expect(await warned).toMatchObject({ obj: { code: 'SLOW_CONSUMER' } });
    slow.destroy();

    const other = await RawClient.connect(socket);
    other.request(2, 'ping');
    expect(await other.waitFor(1)).toEqual([{ jsonrpc: '2.0', id: 2, result: 'pong' }]);
    expect(server.clientCount).toBe(1);
    other.close();
  });

  it('maps a thrown non-Wisp error to INTERNAL_ERROR without leaking its message', async () => {
    const { socket, logger } = await serve({
      boom: { paramsSchema: Type.Object({}), handle: () => { throw new Error('secret detail'); } },
    });
    const client = await RawClient.connect(socket);
    client.request(1, 'boom');
    const [reply] = await client.waitFor(1);
    expect(reply).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error (see the daemon log)', data: { code: 'INTERNAL_ERROR' } } });
    expect(JSON.stringify(reply)).not.toContain('secret detail');
    expect(logger.lines.some((l) => l.level === 'error')).toBe(true);
    client.close();
  });

  it('runs notifications without answering them', async () => {
    let calls = 0;
    const { socket } = await serve({
      count: { paramsSchema: Type.Object({}), handle: () => ++calls },
    });
    const client = await RawClient.connect(socket);
    client.send('{"jsonrpc":"2.0","method":"count"}\n{"jsonrpc":"2.0","method":"missing"}\n');
    client.request(7, 'count');
    expect(await client.waitFor(1)).toEqual([{ jsonrpc: '2.0', id: 7, result: 2 }]);
    client.close();
  });

  it('sends what one turn writes to a client (events, then the answer) in one write, in order', async () => {
    const ref: { server?: RpcServer } = {};
    const { server, socket } = await serve({
      subscribe: { paramsSchema: Type.Object({}), handle: (_p: unknown, ctx: CallContext) => ((ctx.connection.subscribed = true), {}) },
      burst: {
        paramsSchema: Type.Object({}),
        handle: () => {
          for (let n = 1; n <= 3; n++) ref.server?.broadcastEvent(new EmittedEvent({ n } as unknown as WispEvent, serializeEvent));
          return 'done';
        },
      },
    });
    ref.server = server;
    const client = await RawClient.connect(socket);
    client.request(1, 'subscribe');
    await client.waitFor(1);
    const writes = vi.spyOn(net.Socket.prototype, 'write');
    try {
      client.request(2, 'burst');
      const received = await client.waitFor(5);
      expect(received.slice(1)).toEqual([
        { jsonrpc: '2.0', method: 'event', params: { n: 1 } },
        { jsonrpc: '2.0', method: 'event', params: { n: 2 } },
        { jsonrpc: '2.0', method: 'event', params: { n: 3 } },
        { jsonrpc: '2.0', id: 2, result: 'done' },
      ]);
      // The client's own request was one write; the server's four frames, one more.
      const fromServer = writes.mock.contexts.filter((socketWritten) => socketWritten !== client.socket);
      expect(fromServer).toHaveLength(1);
    } finally {
      writes.mockRestore();
    }
    client.close();
  });

  it.each(['signal', 'callSignal'] as const)('gives a handler that first asks for its signal after its client left an aborted signal (ctx.%s)', async (kind) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: (signal: CallSignal) => void;
    const seen = new Promise<CallSignal>((resolve) => (reached = resolve));
    const { server, socket } = await serve({
      late: {
        paramsSchema: Type.Object({}),
        handle: async (_p: unknown, ctx: CallContext) => {
          await released;
          reached(ctx[kind]);
          return null;
        },
      },
    });
    const client = await RawClient.connect(socket);
    client.request(1, 'late');
    await new Promise<void>((resolve) => setImmediate(resolve));
    client.close();
    await client.closed;
    // The server has seen the close on its side before the handler goes on.
    while (server.clientCount > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    release();
    const signal = await seen;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: 'CANCELLED' });
  });
});

