import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonLink } from '../../../src/gateway/link.js';
import { gatewayServer } from '../../../src/gateway/server.js';

/**
 * Issue 33: a daemon that is stopping answers every request with DAEMON_STOPPING on a
 * connection still open, before its daemon.stopping event. A gateway reading its catalog
 * then (tools/list, or after an event) offers no tools and answers calls with an error
 * result; nothing rejects unhandled (which would end the gateway, exit 1). The daemon here
 * is a real socket speaking the control protocol, stopping from the start.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Stopping {
  readonly socket: string;
  /** Resolves once `method` was asked `count` times in all. */
  asked(method: string, count: number): Promise<void>;
}

/** A socket server that subscribes connections and names them, sending a catalog event after the name; every other request: DAEMON_STOPPING. */
async function stoppingDaemon(): Promise<Stopping> {
  const seen: string[] = [];
  const waiters: (() => void)[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wisp-gw-'));
  const socket = path.join(dir, 'd.sock');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((conn) => {
    sockets.add(conn);
    let buffered = '';
    conn.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const request = JSON.parse(buffered.slice(0, newline)) as { id: number; method: string };
        buffered = buffered.slice(newline + 1);
        seen.push(request.method);
        for (const wake of waiters.splice(0)) wake();
        const answer = (body: object): boolean => conn.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, ...body })}\n`);
        if (request.method === 'daemon.status') answer({ result: { you: { clientId: 'client-1' } } });
        else if (request.method === 'events.subscribe') answer({ result: { subscribed: true } });
        else if (request.method === 'client.identify') {
          answer({ result: { clientId: 'client-1 (mcp:test)' } });
          conn.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'event', params: { seq: 1, at: new Date().toISOString(), type: 'service.tools' } })}\n`);
        } else answer({ error: { code: -32000, message: 'the daemon is shutting down', data: { code: 'DAEMON_STOPPING' } } });
      }
    });
    conn.on('close', () => sockets.delete(conn));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  cleanups.push(async () => {
    for (const conn of sockets) conn.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  const asked = async (method: string, count: number): Promise<void> => {
    while (seen.filter((m) => m === method).length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { socket, asked };
}

describe('the gateway in front of a daemon that is stopping', () => {
  it('lists no tools, answers a call with DAEMON_STOPPING, and rejects nothing unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(() => {
      process.off('unhandledRejection', onUnhandled);
    });
    const daemon = await stoppingDaemon();
    const link = new DaemonLink(daemon.socket);
    await link.connect();
    cleanups.push(() => link.close());
    const mcp = gatewayServer(link, { services: null, ownNames: false, approveInClient: false, deferTools: false });
    const client = new Client({ name: 'test', version: '1' });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    await client.connect(clientSide);
    cleanups.push(() => client.close());

    // The event sent after the name makes the gateway read the catalog (refused); so does tools/list.
    await daemon.asked('client.identify', 1);
    expect((await client.listTools()).tools).toEqual([]);
    await daemon.asked('tools.list', 2);
    const call = (await client.callTool({ name: 'anything', arguments: {} })) as CallToolResult;
    expect(call.isError).toBe(true);
    expect(call.content).toEqual([{ type: 'text', text: 'DAEMON_STOPPING: the daemon is shutting down' }]);
    // One more round trip on the same socket (its answers come in order), then a turn of the event loop for a rejection left unhandled to be reported.
    expect((await client.listTools()).tools).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    // Nothing was offered before or after: nothing changed to announce.
    expect(changes).toBe(0);
  });
});

describe('DaemonLink reconnecting', () => {
  it('backs off: a socket that drops every connection at once is tried after 100, 200, 400, 800 ms, then each second', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wisp-gw-'));
    const socket = path.join(dir, 'd.sock');
    const accepted: number[] = [];
    let wake: () => void = () => undefined;
    const server = net.createServer((conn) => {
      accepted.push(performance.now());
      conn.destroy();
      wake();
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const link = new DaemonLink(socket);
    cleanups.push(async () => {
      await link.close();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });
    await link.connect();
    while (accepted.length < 6) await new Promise<void>((resolve) => (wake = resolve));
    const gaps = accepted.slice(1).map((at, i) => at - (accepted[i] ?? 0));
    // Timers never fire early: lower bounds only (a loaded machine makes them longer), 5 ms for the clocks' rounding.
    [100, 200, 400, 800, 1000].forEach((least, i) => expect(gaps[i]).toBeGreaterThanOrEqual(least - 5));
    expect(link.connected).toBe(false);
  });
});
