import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonLink, newGatewayId } from '../../../src/gateway/link.js';

/**
 * Issue 33, LOW 8: every connection of a gateway gives the daemon the gateway's id first
 * (client.identify), so the daemon counts them as one client. The daemon here is a real
 * socket speaking the control protocol, answering client.identify as `answer` says and
 * recording every request.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Request = { id: number; method: string; params: Record<string, unknown> };

async function fakeDaemon(answer: (request: Request) => object): Promise<{ socket: string; requests: Request[] }> {
  const requests: Request[] = [];
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
        const request = JSON.parse(buffered.slice(0, newline)) as Request;
        buffered = buffered.slice(newline + 1);
        requests.push(request);
        const body = request.method === 'events.subscribe' ? { result: { subscribed: true } } : answer(request);
        conn.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, ...body })}\n`);
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
  return { socket, requests };
}

function link(socket: string, gateway?: string): DaemonLink {
  const made = new DaemonLink(socket, gateway);
  cleanups.push(() => made.close());
  return made;
}

describe('DaemonLink and the gateway id', () => {
  it('makes a fresh random id each time, of the shape client.identify takes', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newGatewayId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('gives the gateway id first on every connection, before any other request, and the name once known', async () => {
    const daemon = await fakeDaemon(() => ({ result: { clientId: 'client-1' } }));
    const id = newGatewayId();
    const [one, two] = [link(daemon.socket, id), link(daemon.socket, id)];
    await one.connect();
    await two.connect();
    const identifies = daemon.requests.filter((r) => r.method === 'client.identify');
    expect(identifies.map((r) => r.params)).toEqual([{ gateway: id }, { gateway: id }]);
    expect(daemon.requests.filter((r) => r.method !== 'events.subscribe').map((r) => r.method)).toEqual(['client.identify', 'client.identify']);
    one.identify('mcp:some-client');
    await (await one.current()).call('daemon.status').catch(() => undefined);
    expect(daemon.requests.filter((r) => r.method === 'client.identify').at(-1)?.params).toEqual({ name: 'mcp:some-client' });
  });

  it('tells a call the daemon\'s refusal (LIMIT_EXCEEDED), not "no daemon", while the daemon refuses this gateway\'s connection', async () => {
    const daemon = await fakeDaemon((request) =>
      request.method === 'client.identify'
        ? { error: { code: -32000, message: 'this gateway already has 40 connections to the daemon; close some of its sessions', data: { code: 'LIMIT_EXCEEDED', limit: 'maxConnectionsPerGateway', max: 40 } } }
        : { result: {} },
    );
    const refused = link(daemon.socket);
    await refused.connect();
    expect(refused.connected).toBe(false);
    await expect(refused.current()).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxConnectionsPerGateway' } });
  });

  it('goes on as a client alone with a daemon older than gateway ids (INVALID_PARAMS for the field)', async () => {
    const daemon = await fakeDaemon((request) =>
      request.method === 'client.identify' && 'gateway' in request.params
        ? { error: { code: -32602, message: 'unknown field gateway', data: { code: 'INVALID_PARAMS' } } }
        : request.method === 'daemon.status'
          ? { result: { you: { clientId: 'client-3' } } }
          : { result: { clientId: 'client-3 (mcp:x)' } },
    );
    const old = link(daemon.socket);
    await old.connect();
    expect(old.connected).toBe(true);
    expect(old.me).toBe('client-3');
  });
});
