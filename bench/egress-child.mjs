// A process of the egress bench (bench/sandbox.mjs forks it with an IPC channel), so that the
// client, the egress proxy and the destination each run on a thread of their own, as they do
// for a sandboxed server (its process, the daemon, a host elsewhere):
//   web                       an HTTP server on 127.0.0.1 answering "ok"; sends {port}
//   proxy SOCKET AUTHORITY    EgressProxy (from dist/) on SOCKET with AUTHORITY granted; sends
//                             {ready}; answers "audits" with the count of allowed records and
//                             the first record that was not allowed
import http from 'node:http';
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
} else {
  throw new Error(`bench/egress-child.mjs: unknown mode ${mode}`);
}
