// The sandbox bench (issue 34): what running a stdio server in bubblewrap costs, and what a
// request through the egress proxy costs, each against its baseline in the same run:
//   activation  services.activate of the same server (scenario-server, 64 tools), sandboxed
//               (the default profile) and unsandboxed, interleaved round by round
//   calls       tools.call echo, SEQ sequential calls per round on each of the two services
//               (both active in one daemon, an approver answering each approval): p50, p99
//   egress      an HTTP GET to a server on 127.0.0.1, through the egress proxy's Unix socket
//               (a forward request, and a CONNECT tunnel carrying the same GET), against the
//               same GET straight to it; each on a new connection, as the proxy makes one
//               upstream connection per request; client, proxy and server in three processes;
//               and both kinds through a minimal relay with the same hops (the baseline the
//               proxy's own work is measured against: its checks, its audit, its bounds)
import { fork } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { WispClient } from '../dist/control/client.js';
import { RUNS, compare, deadline, envInt, exited, percentiles, root, server, startDaemon, stats, track } from './common.mjs';

export const SANDBOX_SEQ = envInt('BENCH_SANDBOX_SEQ', 300);
export const EGRESS_REQUESTS = envInt('BENCH_EGRESS_REQUESTS', 300);
const TOOLS = ['--tools', '62'];
const PHASE_MS = 120_000;
const NO_SANDBOX = { enabled: false, read: [], write: [], net: { mode: 'none' } };

/** The subjects in a round, in an order that rotates with the round: no subject always goes first. */
const rotated = (list, r) => list.map((_, k) => list[(r + k) % list.length]);
const ratio = (a, b) => a.map((v, i) => v / b[i]);

async function activations(client, services) {
  const times = new Map(services.map((s) => [s.name, []]));
  for (let r = -1; r < RUNS; r++) {
    for (const service of rotated(services, r + 1)) {
      const t = performance.now();
      const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
      const ms = performance.now() - t;
      if (active.connection.status !== 'active' || active.connection.toolCount !== 64) throw new Error(`${service.name}: activation failed: ${JSON.stringify(active.connection)}`);
      await client.call('services.disable', { id: service.id });
      // Round -1 warms up (the daemon's first spawn, bwrap's first run, the page cache).
      if (r >= 0) times.get(service.name).push(ms);
    }
  }
  return times;
}

async function sequentialCalls(caller, service) {
  const times = [];
  for (let i = 0; i < SANDBOX_SEQ; i++) {
    const text = `call ${i}`;
    const t = performance.now();
    const result = await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text } });
    times.push(performance.now() - t);
    if (result.content[0].text !== text) throw new Error(`${service.name}: echo answered ${JSON.stringify(result.content[0].text)} to ${JSON.stringify(text)}`);
  }
  return percentiles(times);
}

async function calls(client, caller, services) {
  for (const service of services) {
    const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    if (active.connection.status !== 'active') throw new Error(`${service.name}: activation failed: ${JSON.stringify(active.connection)}`);
  }
  const rounds = new Map(services.map((s) => [s.name, []]));
  for (let r = -1; r < RUNS; r++) {
    for (const service of rotated(services, r + 1)) {
      const seq = await deadline(sequentialCalls(caller, service), PHASE_MS, `${service.name}: ${SANDBOX_SEQ} sequential calls`);
      if (r >= 0) rounds.get(service.name).push(seq);
    }
  }
  return rounds;
}

/** One GET on a new connection made by `connect`; resolves when the whole answer is read. */
function get(options) {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent: false, ...options }, (res) => {
      let length = 0;
      res.on('data', (chunk) => (length += chunk.length));
      res.once('end', () => (res.statusCode === 200 && length === 2 ? resolve() : reject(new Error(`answered ${res.statusCode} with ${length} bytes`))));
    });
    req.once('error', reject);
    req.end();
  });
}

/** A CONNECT through the proxy's socket, then the GET inside the tunnel. */
function tunnel(socketPath, authority) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('error', reject);
    let head = '';
    const onData = (chunk) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.removeListener('data', onData);
      if (!head.startsWith('HTTP/1.1 200')) {
        socket.destroy();
        reject(new Error(`CONNECT answered ${head.split('\r\n')[0]}`));
        return;
      }
      // No agent: http.request then uses createConnection (with agent: false it would dial on its own).
      get({ agent: undefined, createConnection: () => socket, path: '/', headers: { host: authority } }).then(resolve, reject);
    };
    socket.on('data', onData);
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

async function timed(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return percentiles(times);
}

/** Forks bench/egress-child.mjs in `args` mode; resolves with the child and its first message. */
async function child(args) {
  const forked = track(fork(path.join(root, 'bench', 'egress-child.mjs'), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const first = await deadline(
    new Promise((resolve, reject) => {
      forked.once('message', resolve);
      forked.once('exit', (code) => reject(new Error(`bench/egress-child.mjs ${args[0]} exited (${code}) before it was ready`)));
    }),
    30_000,
    `bench/egress-child.mjs ${args[0]}`,
  );
  return { child: forked, first };
}

export async function egress(dir) {
  const web = await child(['web']);
  const { port } = web.first;
  const authority = `127.0.0.1:${port}`;
  const socketPath = path.join(dir, 'egress', 'bench.sock');
  const proxy = await child(['proxy', socketPath, authority]);
  const relaySocket = path.join(dir, 'egress', 'relay.sock');
  const relay = await child(['relay', relaySocket]);
  const subjects = [
    { name: 'relay-forward', run: () => get({ socketPath: relaySocket, path: `http://${authority}/`, headers: { host: authority } }) },
    { name: 'relay-connect', run: () => tunnel(relaySocket, authority) },
    { name: 'direct', run: () => get({ host: '127.0.0.1', port, path: '/' }) },
    { name: 'forward', run: () => get({ socketPath, path: `http://${authority}/`, headers: { host: authority } }) },
    { name: 'connect', run: () => tunnel(socketPath, authority) },
  ];
  const rounds = new Map(subjects.map((s) => [s.name, []]));
  try {
    for (let r = -1; r < RUNS; r++) {
      for (const subject of rotated(subjects, r + 1)) {
        const p = await deadline(timed(EGRESS_REQUESTS, subject.run), PHASE_MS, `egress ${subject.name}: ${EGRESS_REQUESTS} requests`);
        if (r >= 0) rounds.get(subject.name).push(p);
      }
    }
    // Every request through the proxy has its audit record (written when its upstream closes), and each was allowed.
    const expected = 2 * EGRESS_REQUESTS * (RUNS + 1);
    const audits = () => new Promise((resolve) => {
      proxy.child.once('message', resolve);
      proxy.child.send('audits');
    });
    const seen = await deadline(
      (async () => {
        for (;;) {
          const got = await audits();
          if (got.audited >= expected || got.unexpected !== null) return got;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      10_000,
      `egress audit records (${expected} expected)`,
    );
    if (seen.unexpected !== null) throw new Error(`the egress proxy did not allow the bench's request: ${JSON.stringify(seen.unexpected)}`);
  } finally {
    for (const { child: c } of [proxy, relay, web]) {
      c.disconnect();
      await exited(c);
    }
  }
  return rounds;
}

export async function sandboxCosts(dir) {
  const daemon = await startDaemon(path.join(dir, 'wispd'));
  const client = await WispClient.connect(daemon.socket);
  const caller = await WispClient.connect(daemon.socket);
  client.onEvent((event) => {
    if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await client.call('events.subscribe', { types: ['approval.requested'] });
  const pair = async (suffix, args) => {
    const register = async (name, extra) => (await client.call('services.register', { name: `${name}${suffix}`, command: process.execPath, args: [server, ...args], ...extra })).service;
    const services = [await register('sandboxed', {}), await register('unsandboxed', { sandbox: NO_SANDBOX })];
    if (services[0].sandbox.status !== 'on' || services[1].sandbox.status !== 'off') throw new Error(`unexpected sandbox states: ${JSON.stringify(services.map((s) => s.sandbox))}`);
    // Named alike in the figures: the pair's own suffix dropped.
    return services.map((service) => ({ ...service, name: service.name.slice(0, service.name.length - suffix.length) }));
  };
  let act;
  let call;
  try {
    act = await activations(client, await pair('-64', TOOLS));
    // Two services of a few tools each (both active at once: 2 x 64 would pass the 96-tool limit).
    call = await calls(client, caller, await pair('-echo', []));
  } finally {
    await client.call('daemon.shutdown');
    await exited(daemon.child);
  }
  const proxied = await egress(dir);
  const series = (rounds, name, key) => rounds.get(name).map((x) => x[key]);
  const egressSubject = (name) => ({ p50: stats(series(proxied, name, 'p50')), p99: stats(series(proxied, name, 'p99')) });
  return {
    name: 'sandbox',
    rounds: RUNS,
    seq: SANDBOX_SEQ,
    requests: EGRESS_REQUESTS,
    activation: compare('activation of a 64-tool stdio server, sandboxed / unsandboxed', act.get('sandboxed'), act.get('unsandboxed'), 'services.activate of scenario-server (64 tools) in bubblewrap with the default profile vs the same server with the sandbox off, one daemon, interleaved'),
    calls: {
      subjects: Object.fromEntries(['sandboxed', 'unsandboxed'].map((name) => [name, { p50: stats(series(call, name, 'p50')), p99: stats(series(call, name, 'p99')) }])),
      ratio: { p50: stats(ratio(series(call, 'sandboxed', 'p50'), series(call, 'unsandboxed', 'p50'))), p99: stats(ratio(series(call, 'sandboxed', 'p99'), series(call, 'unsandboxed', 'p99'))) },
    },
    egress: {
      subjects: Object.fromEntries(['direct', 'forward', 'connect', 'relay-forward', 'relay-connect'].map((name) => [name, egressSubject(name)])),
      ratio: {
        forward: stats(ratio(series(proxied, 'forward', 'p50'), series(proxied, 'direct', 'p50'))),
        connect: stats(ratio(series(proxied, 'connect', 'p50'), series(proxied, 'direct', 'p50'))),
        forwardOverRelay: stats(ratio(series(proxied, 'forward', 'p50'), series(proxied, 'relay-forward', 'p50'))),
        connectOverRelay: stats(ratio(series(proxied, 'connect', 'p50'), series(proxied, 'relay-connect', 'p50'))),
      },
    },
    note: `${RUNS} rounds after one warm-up round, subjects in rotating order. Activation: one activation of each service per round (spawn, initialize, discovery of 64 tools). Calls: per round, ${SANDBOX_SEQ} sequential tools.call echo on each service (both active in one daemon; an approver connection answers each approval). Egress: per round, ${EGRESS_REQUESTS} sequential GETs (a 2-byte answer) from the bench process to an HTTP server on 127.0.0.1, each on a new connection: straight to it, as a forward request to the proxy's Unix socket, and as a CONNECT tunnel through it carrying the same GET, and both through a minimal relay with the same hops (bench/egress-child.mjs relay: no checks, no audit, no bounds); the client (the bench process), the proxy (EgressProxy from dist/, the address granted) and the HTTP server each run in a process of their own (bench/egress-child.mjs), and every request's audit record is checked. The bridge into a sandbox's network namespace is not part of this figure`,
  };
}
