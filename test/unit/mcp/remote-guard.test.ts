import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, describe, expect, it } from 'vitest';
import { guardMessages } from '../../../src/mcp/failure.js';
import { HttpTransport } from '../../../src/mcp/http-transport.js';
import { SseTransport } from '../../../src/mcp/sse-transport.js';

// Issue 44: the last-resort guard (a throw out of handling one server message fails that
// connection, never the daemon, and is never swallowed into the SDK's onerror) had tests over
// stdio only. Here it is over the SDK's two remote client transports, against a real server.

const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}';
const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends one request through `transport`, with a handler that throws on the server's message, guarded: what reached the guard and what reached onerror. */
async function throwingHandler(transport: Transport): Promise<{ guarded: unknown[]; onerror: unknown[] }> {
  const guarded: unknown[] = [];
  const onerror: unknown[] = [];
  transport.onerror = (error) => void onerror.push(error);
  let reached!: () => void;
  const done = new Promise<void>((resolve) => (reached = resolve));
  transport.onmessage = () => {
    throw new RangeError('Maximum call stack size exceeded');
  };
  guardMessages(transport, (error) => {
    guarded.push(error);
    reached();
  });
  await transport.start();
  await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
  await done;
  await transport.close();
  return { guarded, onerror };
}

const caps = { headers: {}, maxMessageBytes: 1024 * 1024, maxMessageNesting: 512, onFailure: () => undefined };

describe('the message guard over the remote transports', () => {
  it('streamable HTTP (an SSE answer): the throw reaches the guard, not the SDK\'s onerror', async () => {
    const url = await serve((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`event: message\ndata: ${NOTE}\n\n`);
      });
    });
    const { guarded, onerror } = await throwingHandler(new HttpTransport({ ...caps, url: `${url}/mcp` }).inner);
    expect(guarded.map((e) => (e as Error).message)).toEqual(['Maximum call stack size exceeded']);
    expect(onerror.map((e) => (e as Error).message)).not.toContain('Maximum call stack size exceeded');
  });

  it('streamable HTTP (a JSON answer): the same', async () => {
    const url = await serve((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(NOTE));
    });
    const { guarded, onerror } = await throwingHandler(new HttpTransport({ ...caps, url: `${url}/mcp` }).inner);
    expect(guarded.map((e) => (e as Error).message)).toEqual(['Maximum call stack size exceeded']);
    expect(onerror.map((e) => (e as Error).message)).not.toContain('Maximum call stack size exceeded');
  });

  it('legacy HTTP+SSE: the same, for a message on the event stream', async () => {
    let stream: http.ServerResponse | undefined;
    const url = await serve((req, res) => {
      if (req.method === 'GET') {
        stream = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: endpoint\ndata: /messages\n\n');
        return;
      }
      req.resume();
      req.on('end', () => {
        res.writeHead(202).end();
        stream?.write(`event: message\ndata: ${NOTE}\n\n`);
      });
    });
    const transport = new SseTransport({ ...caps, url: `${url}/sse` });
    const { guarded, onerror } = await throwingHandler(transport.inner);
    stream?.destroy();
    expect(guarded.map((e) => (e as Error).message)).toEqual(['Maximum call stack size exceeded']);
    expect(onerror.map((e) => (e as Error).message)).not.toContain('Maximum call stack size exceeded');
  });
});
