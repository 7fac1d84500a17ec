// The gateway bench's floor: a minimal MCP front with the gateway's hops and nothing else. It
// speaks MCP on stdio to the bench's SDK Client (initialize, tools/call) and sends each call
// on, as tools.call on one Unix-socket connection, to bench/relay.mjs, which asks its approver
// (the bench) and then calls the server: client -> this process -> the relay -> approver ->
// the relay -> the server, as client -> wispctl mcp serve -> wispd -> approver -> wispd -> the
// server. No schema, no catalog, no redaction, no audit, no labels: only the hops and the wire.
// Usage: node bench/gateway-relay.mjs SOCKET
import net from 'node:net';

const socket = net.connect(process.argv[2]);
const pending = new Map(); // relay request id -> MCP request id
let nextId = 1;
let fromRelay = '';
socket.setEncoding('utf8').on('data', (text) => {
  fromRelay += text;
  let nl;
  while ((nl = fromRelay.indexOf('\n')) >= 0) {
    const message = JSON.parse(fromRelay.slice(0, nl));
    fromRelay = fromRelay.slice(nl + 1);
    const mcpId = pending.get(message.id);
    pending.delete(message.id);
    if (mcpId !== undefined) reply(mcpId, message.result.result);
  }
});

const reply = (id, result) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);

let fromClient = '';
process.stdin.setEncoding('utf8').on('data', (text) => {
  fromClient += text;
  let nl;
  while ((nl = fromClient.indexOf('\n')) >= 0) {
    const { id, method, params } = JSON.parse(fromClient.slice(0, nl));
    fromClient = fromClient.slice(nl + 1);
    if (method === 'initialize') reply(id, { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'gateway-relay', version: '1' } });
    else if (method === 'tools/call') {
      const relayId = nextId++;
      pending.set(relayId, id);
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: relayId, method: 'tools.call', params: { toolName: params.name, arguments: params.arguments } })}\n`);
    } else if (id !== undefined) reply(id, {});
  }
});
process.stdin.on('end', () => process.exit(0));
