// A process of the egress bench (bench/sandbox.mjs forks it with an IPC channel), so that the
// client, the egress proxy and the destination each run on a thread of their own, as they do
// for a sandboxed server (its process, the daemon, a host elsewhere):
//   web                       an HTTP server on 127.0.0.1 answering "ok"; sends {port}
//   proxy SOCKET AUTHORITY    EgressProxy (from dist/) on SOCKET with AUTHORITY granted; sends
//                             {ready}; answers "audits" with the count of allowed records and
//                             the first record that was not allowed
//   relay SOCKET              the baseline: a minimal relay with the proxy's hops on SOCKET, a
//                             forward request sent on over a new connection and a CONNECT
//                             spliced; no checks, no audit, no limits; sends {ready}
import http from 'node:http';
import net from 'node:net';
import { grantsDecider, parseEgressGrant } from '../dist/mcp/sandbox/egress-grants.js';
import { EgressProxy } from '../dist/mcp/sandbox/egress-proxy.js';

const [mode, socketPath, authority] = process.argv.slice(2);
if (mode === 'web') {
  const web = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  web.listen(0, '127.0.0.1', () => process.send({ port: web.address().port }));
  process.on('disconnect', () => process.exit(0));
} else if (mode === 'proxy') {
  // A loopback address is reached only when granted by address (docs/security.md).
  const grant = parseEgressGrant(authority);
  if (!grant.ok) throw new Error(grant.reason);
  let audited = 0;
  let unexpected = null;
  const proxy = await EgressProxy.listen({
    serviceId: 'bench',
    socketPath,
    decide: grantsDecider(() => [grant.grant]),
    onAudit: (record) => {
      if (record.decision === 'allowed') audited += 1;
      else unexpected ??= record;
    },
  });
  process.on('message', (message) => {
    if (message === 'audits') process.send({ audited, unexpected });
  });
  process.on('disconnect', () => void proxy.close().then(() => process.exit(0)));
  process.send({ ready: true });
} else if (mode === 'relay') {
  const relay = http.createServer((req, res) => {
    const url = new URL(req.url);
    const outgoing = http.request({ host: url.hostname, port: Number(url.port), method: req.method, path: url.pathname, headers: req.headers, agent: false }, (incoming) => {
      res.writeHead(incoming.statusCode, incoming.headers);
      incoming.pipe(res);
    });
    outgoing.once('error', () => res.destroy());
    req.pipe(outgoing);
  });
  relay.on('connect', (req, client, head) => {
    const [host, port] = req.url.split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.once('error', () => client.destroy());
    client.once('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
  });
  relay.listen(socketPath, () => process.send({ ready: true }));
  process.on('disconnect', () => process.exit(0));
} else {
  throw new Error(`bench/egress-child.mjs: unknown mode ${mode}`);
}
