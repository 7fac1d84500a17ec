// The floor the bench compares wispd's call path against: a minimal relay with the same hops
// and the same wire (newline-delimited JSON-RPC on a Unix socket). A caller's tools.call
// becomes an approval.requested event to every subscribed connection; the first
// approvals.respond sends the call to one stdio MCP server; its answer goes back to the
// caller. No validation, no logging, no audit: only the hops.
// Usage: node bench/relay.mjs SOCKET COMMAND [ARGS...]   (writes {"socket":...} to fd 3 when ready)
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import net from 'node:net';

const [socketPath, command, ...args] = process.argv.slice(2);
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
const upstream = new Map(); // MCP request id -> (message) => void
let nextUpstream = 1;
let buffered = '';
server.stdout.setEncoding('utf8').on('data', (text) => {
  buffered += text;
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const message = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    upstream.get(message.id)?.(message);
    upstream.delete(message.id);
  }
});
const toServer = (method, params) =>
  new Promise((resolve) => {
    const id = nextUpstream++;
    upstream.set(id, resolve);
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });

const subscribers = new Set();
const waiting = new Map(); // approval id -> () => void
let nextApproval = 1;
const handlers = {
  'events.subscribe': (_, socket) => (subscribers.add(socket), {}),
  'approvals.respond': (params) => (waiting.get(params.id)?.(params.decision), waiting.delete(params.id), {}),
  'tools.call': async (params) => {
    const id = `a${nextApproval++}`;
    const decision = new Promise((resolve) => waiting.set(id, resolve));
    const event = `${JSON.stringify({ jsonrpc: '2.0', method: 'event', params: { type: 'approval.requested', approval: { id } } })}\n`;
    for (const s of subscribers) s.write(event);
    if ((await decision) !== 'approve') throw new Error('denied');
    const reply = await toServer('tools/call', { name: params.toolName, arguments: params.arguments });
    return { result: reply.result };
  },
  'daemon.shutdown': () => (setImmediate(() => (server.kill(), process.exit(0))), {}),
};

await toServer('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'relay', version: '1' } });
server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
net
  .createServer((socket) => {
    let input = '';
    socket.setEncoding('utf8').on('data', (text) => {
      input += text;
      let nl;
      while ((nl = input.indexOf('\n')) >= 0) {
        const { id, method, params } = JSON.parse(input.slice(0, nl));
        input = input.slice(nl + 1);
        Promise.resolve(handlers[method](params, socket)).then((result) => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`));
      }
    });
    socket.on('close', () => subscribers.delete(socket)).on('error', () => {});
  })
  .listen(socketPath, () => writeSync(3, `${JSON.stringify({ socket: socketPath })}\n`));
