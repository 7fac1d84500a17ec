// The gateway bench (issue 16): a tools/call through `wispctl mcp serve` against a direct SDK
// callTool on the same server (scenario-server's `echo`), interleaved round by round.
//   direct   the SDK Client's callTool in this process, on the server over stdio (the floor)
//   relay    the same hops with nothing else (the floor of the design): the SDK Client's callTool
//            on bench/gateway-relay.mjs over stdio, which sends it to bench/relay.mjs, whose
//            approval the bench's approver answers at once, then the server runs it
//   gateway  the SDK Client's callTool on `wispctl mcp serve` over stdio: the gateway forwards
//            it to wispd (tools.call), the daemon asks for an approval and the bench's approver
//            connection answers it at once, then the server runs it
// Each round, per subject: SEQ sequential calls (p50, p99), then PAR calls with CONCURRENCY in
// flight on the one client (calls/s).
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispClient } from '../dist/control/client.js';
import { RUNS, deadline, envInt, exited, percentiles, root, server, startDaemon, startRelay, stats } from './common.mjs';

export const GATEWAY_SEQ = envInt('BENCH_GATEWAY_SEQ', 200);
export const GATEWAY_PAR = envInt('BENCH_GATEWAY_PAR', 500);
export const GATEWAY_CONCURRENCY = 16;
const PHASE_MS = 120_000;

/** The daemon with the echo service active, and an approver that approves every approval.requested. */
async function daemonWithApprover(dir) {
  const started = await startDaemon(path.join(dir, 'wispd'));
  const approver = await WispClient.connect(started.socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await approver.call('events.subscribe', { types: ['approval.requested', 'approval.resolved'] });
  const { service } = await approver.call('services.register', { name: 'echo', command: process.execPath, args: [server] });
  await approver.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const { tools } = await approver.call('tools.list', {});
  const echo = tools.find((tool) => tool.serviceId === service.id && tool.name === 'echo');
  if (echo === undefined) throw new Error('the echo service has no echo tool');
  return { started, approver, modelName: echo.modelName };
}

/** An SDK Client over stdio whose `echo` is `toolName`. */
async function mcpSubject(name, transport, toolName, pid) {
  const client = new Client({ name: `bench-${name}`, version: '1' });
  await client.connect(transport);
  return {
    name,
    call: async (text) => {
      const result = await client.callTool({ name: toolName, arguments: { text } });
      if (result.isError === true) throw new Error(`${name}: the call failed: ${JSON.stringify(result.content)}`);
      return result.content[0]?.text;
    },
    pid,
    stop: () => client.close(),
  };
}

/** bench/relay.mjs with an approver connection that approves every approval.requested (it speaks wispd's wire). */
async function relayWithApprover(dir) {
  const started = await startRelay(path.join(dir, 'gateway-relay.sock'));
  const approver = await WispClient.connect(started.socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await approver.call('events.subscribe', { types: ['approval.requested'] });
  return { started, approver };
}

async function startSubjects(dir) {
  const daemon = await daemonWithApprover(dir);
  const relayed = await relayWithApprover(dir);
  const direct = await mcpSubject('direct', new StdioClientTransport({ command: process.execPath, args: [server], stderr: 'ignore' }), 'echo', null);
  const relay = await mcpSubject('relay', new StdioClientTransport({ command: process.execPath, args: [path.join(root, 'bench', 'gateway-relay.mjs'), relayed.started.socket], stderr: 'ignore' }), 'echo', null);
  const serve = new StdioClientTransport({ command: process.execPath, args: [path.join(root, 'bin', 'wispctl.js'), '--socket', daemon.started.socket, 'mcp', 'serve'], stderr: 'ignore' });
  const gateway = await mcpSubject('gateway', serve, daemon.modelName, null);
  return {
    subjects: [direct, relay, gateway],
    stop: async () => {
      await direct.stop();
      await relay.stop();
      await gateway.stop();
      await relayed.approver.close();
      relayed.started.child.kill('SIGTERM');
      await exited(relayed.started.child);
      await daemon.approver.close();
      daemon.started.child.kill('SIGTERM');
      await exited(daemon.started.child);
    },
  };
}

/** One call, checked: a subject that answers with the wrong thing fails the run. */
async function checked(subject, i) {
  const text = `call ${i}`;
  const got = await subject.call(text);
  if (got !== text) throw new Error(`${subject.name}: echo answered ${JSON.stringify(got)} to ${JSON.stringify(text)}`);
}

async function sequential(subject) {
  const times = [];
  for (let i = 0; i < GATEWAY_SEQ; i++) {
    const t = performance.now();
    await checked(subject, i);
    times.push(performance.now() - t);
  }
  return percentiles(times);
}

async function parallel(subject) {
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: GATEWAY_CONCURRENCY }, async () => {
    while (next < GATEWAY_PAR) await checked(subject, next++);
  }));
  return { rate: (GATEWAY_PAR / (performance.now() - t)) * 1000 };
}

async function round(subject) {
  const seq = await deadline(sequential(subject), PHASE_MS, `${subject.name}: ${GATEWAY_SEQ} sequential calls`);
  const par = await deadline(parallel(subject), PHASE_MS, `${subject.name}: ${GATEWAY_PAR} calls, ${GATEWAY_CONCURRENCY} in flight`);
  return { p50: seq.p50, p99: seq.p99, ...par };
}

const ratio = (a, b) => a.map((v, i) => v / b[i]);

export async function gatewayCalls(dir) {
  const { subjects, stop } = await startSubjects(dir);
  const rounds = new Map(subjects.map((s) => [s.name, []]));
  try {
    for (const subject of subjects) await round(subject);
    for (let r = 0; r < RUNS; r++) {
      for (let k = 0; k < subjects.length; k++) {
        const subject = subjects[(r + k) % subjects.length];
        rounds.get(subject.name).push(await round(subject));
      }
    }
  } finally {
    await stop();
  }
  const series = (name, key) => rounds.get(name).map((x) => x[key]);
  return {
    name: 'gateway calls',
    note: `scenario-server's echo behind each subject, each an SDK Client over stdio in the bench process; ${RUNS} rounds after one warm-up round, interleaved in rotating order; each round, per subject, ${GATEWAY_SEQ} sequential calls (p50, p99) then ${GATEWAY_PAR} calls with ${GATEWAY_CONCURRENCY} in flight (calls/s). direct: the server itself; relay: bench/gateway-relay.mjs (a minimal MCP front on stdio) -> bench/relay.mjs -> the approver -> the server, the gateway's hops with nothing else; gateway: wispctl mcp serve (its own node process) -> wispd tools.call -> an approval answered at once by an approver connection subscribed to approval.requested -> the server. Every answer is checked`,
    rounds: RUNS,
    seq: GATEWAY_SEQ,
    par: GATEWAY_PAR,
    concurrency: GATEWAY_CONCURRENCY,
    subjects: Object.fromEntries([...rounds.keys()].map((name) => [name, { p50: stats(series(name, 'p50')), p99: stats(series(name, 'p99')), rate: stats(series(name, 'rate')) }])),
    ratios: {
      gatewayRelay: {
        p50: stats(ratio(series('gateway', 'p50'), series('relay', 'p50'))),
        p99: stats(ratio(series('gateway', 'p99'), series('relay', 'p99'))),
        rate: stats(ratio(series('gateway', 'rate'), series('relay', 'rate'))),
      },
      relayDirect: {
        p50: stats(ratio(series('relay', 'p50'), series('direct', 'p50'))),
        rate: stats(ratio(series('relay', 'rate'), series('direct', 'rate'))),
      },
      gatewayDirect: {
        p50: stats(ratio(series('gateway', 'p50'), series('direct', 'p50'))),
        p99: stats(ratio(series('gateway', 'p99'), series('direct', 'p99'))),
        rate: stats(ratio(series('gateway', 'rate'), series('direct', 'rate'))),
      },
    },
    raw: Object.fromEntries(rounds),
  };
}
