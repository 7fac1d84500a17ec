// The call bench: four subjects on the same server (scenario-server's `echo`), interleaved
// round by round so drift on a shared machine hits all alike:
//   direct   the SDK Client's callTool in this process (no daemon: the floor of the server itself)
//   relay    bench/relay.mjs, the same hops and wire as wispd with nothing else (the floor of the design)
//   wispd    tools.call through the socket, an approver connection answering every approval
//   mcp-hub  mcp-hub 4.2.1's REST call (no approval step at all): the peer
// Each round, per subject: SEQ sequential calls (p50, p99), then PAR calls with CONCURRENCY in
// flight (calls/s, and the daemon process's CPU per call from /proc; the server child is not counted).
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispClient } from '../dist/control/client.js';
import { RUNS, cpuMs, envInt, deadline, exited, percentiles, server, startDaemon, startRelay, stats } from './common.mjs';
import { MCP_HUB_VERSION, startMcpHub } from './mcp-hub.mjs';

export const SEQ = envInt('BENCH_SEQ', 500);
export const PAR = envInt('BENCH_PAR', 2000);
export const CONCURRENCY = 16;
// Generous: a phase takes well under a second; a stuck subject fails the run instead of hanging it.
const PHASE_MS = 120_000;

/** Connects CONCURRENCY callers and an approver that approves every approval.requested (wispd and the relay speak the same wire). */
async function socketSubject(name, started, serviceId, setup) {
  const approver = await WispClient.connect(started.socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  const id = serviceId ?? (await setup(approver));
  // Only approvals: what an approver needs (wispd filters by type since events.subscribe took a list; the relay sends nothing else).
  await approver.call('events.subscribe', { types: ['approval.requested', 'approval.resolved'] });
  const callers = await Promise.all(Array.from({ length: CONCURRENCY }, () => WispClient.connect(started.socket)));
  return {
    name,
    pid: started.child.pid,
    call: async (worker, text) => {
      const result = await callers[worker].call('tools.call', { serviceId: id, toolName: 'echo', arguments: { text } });
      return name === 'relay' ? result.result.content[0].text : result.content[0].text;
    },
    stop: async () => {
      started.child.kill('SIGTERM');
      await exited(started.child);
    },
  };
}

async function startSubjects(dir) {
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [server], stderr: 'ignore' }));
  const relay = await socketSubject('relay', await startRelay(path.join(dir, 'relay.sock')), 'echo');
  const wispd = await socketSubject('wispd', await startDaemon(path.join(dir, 'wispd')), null, async (client) => {
    const { service: registered } = await client.call('services.register', { name: 'echo', command: process.execPath, args: [server] });
    // As a user's would, the service holds a secret: every reply and event is then checked for it (redaction).
    const { service } = await client.call('services.setEnv', { id: registered.id, mode: 'replace', variables: [{ name: 'API_TOKEN', value: 'bench-secret-value-0123456789', storage: 'session' }] });
    await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    return service.id;
  });
  const hub = await startMcpHub({ dir: path.join(dir, 'mcp-hub'), config: { mcpServers: { echo: { command: process.execPath, args: [server] } } } });
  return [
    { name: 'direct', pid: null, call: async (_, text) => (await direct.callTool({ name: 'echo', arguments: { text } })).content[0].text, stop: () => direct.close() },
    relay,
    wispd,
    { name: 'mcp-hub', pid: hub.child.pid, call: async (_, text) => (await hub.call('echo', 'echo', { text })).content[0].text, stop: () => hub.stop() },
  ];
}

/** One call, checked: a subject that answers with the wrong thing fails the run. */
async function checked(subject, worker, i) {
  const text = `call ${i}`;
  const got = await subject.call(worker, text);
  if (got !== text) throw new Error(`${subject.name}: echo answered ${JSON.stringify(got)} to ${JSON.stringify(text)}`);
}

async function sequential(subject) {
  const times = [];
  for (let i = 0; i < SEQ; i++) {
    const t = performance.now();
    await checked(subject, 0, i);
    times.push(performance.now() - t);
  }
  return percentiles(times);
}

async function parallel(subject) {
  const cpu0 = subject.pid === null ? null : cpuMs(subject.pid);
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, worker) => {
    while (next < PAR) await checked(subject, worker, next++);
  }));
  const ms = performance.now() - t;
  const cpu = cpu0 === null ? null : cpuMs(subject.pid) - cpu0;
  return { rate: (PAR / ms) * 1000, cpuUsPerCall: cpu === null ? null : (cpu * 1000) / PAR };
}

async function round(subject) {
  const seq = await deadline(sequential(subject), PHASE_MS, `${subject.name}: ${SEQ} sequential calls`);
  const par = await deadline(parallel(subject), PHASE_MS, `${subject.name}: ${PAR} calls, ${CONCURRENCY} in flight`);
  return { p50: seq.p50, p99: seq.p99, ...par };
}

const ratio = (a, b) => a.map((v, i) => v / b[i]);

export async function toolCalls(dir) {
  const subjects = await startSubjects(dir);
  const rounds = new Map(subjects.map((s) => [s.name, []]));
  try {
    // Warm-up (JIT, connection pools, first-call paths), not recorded.
    for (const subject of subjects) await round(subject);
    for (let r = 0; r < RUNS; r++) {
      // Rotate the order, so no subject always runs first after the others.
      for (let k = 0; k < subjects.length; k++) {
        const subject = subjects[(r + k) % subjects.length];
        rounds.get(subject.name).push(await round(subject));
      }
    }
  } finally {
    for (const subject of subjects) await subject.stop();
  }
  const series = (name, key) => rounds.get(name).map((x) => x[key]);
  const bySubject = Object.fromEntries(
    [...rounds.keys()].map((name) => [name, { p50: stats(series(name, 'p50')), p99: stats(series(name, 'p99')), rate: stats(series(name, 'rate')), cpuUsPerCall: stats(series(name, 'cpuUsPerCall')) }]),
  );
  return {
    name: 'tool calls',
    note: `scenario-server's echo behind each subject; ${RUNS} rounds after one warm-up round, the subjects interleaved in rotating order; each round, per subject, ${SEQ} sequential calls (p50, p99) then ${PAR} calls with ${CONCURRENCY} in flight (calls/s; CPU per call = utime+stime of the daemon process from /proc/PID/stat during that phase, the server child not counted; counted in 10 ms ticks, so one round's figure is good to about ${Math.round(10_000 / PAR)} us). direct: one SDK Client in the bench process (${CONCURRENCY} in flight on it); relay: bench/relay.mjs; wispd: tools.call on a service holding one secret variable (so redaction has a value to look for), an approver connection subscribed to approval.requested and approval.resolved answering each; mcp-hub ${MCP_HUB_VERSION}: POST /api/servers/tools over a keep-alive undici Pool of ${CONCURRENCY} connections, no approval step. Every answer is checked`,
    rounds: RUNS,
    seq: SEQ,
    par: PAR,
    concurrency: CONCURRENCY,
    subjects: bySubject,
    ratios: {
      wispdRelay: {
        p50: stats(ratio(series('wispd', 'p50'), series('relay', 'p50'))),
        p99: stats(ratio(series('wispd', 'p99'), series('relay', 'p99'))),
        rate: stats(ratio(series('wispd', 'rate'), series('relay', 'rate'))),
        cpu: stats(ratio(series('wispd', 'cpuUsPerCall'), series('relay', 'cpuUsPerCall'))),
      },
      wispdHub: {
        p50: stats(ratio(series('wispd', 'p50'), series('mcp-hub', 'p50'))),
        p99: stats(ratio(series('wispd', 'p99'), series('mcp-hub', 'p99'))),
        rate: stats(ratio(series('wispd', 'rate'), series('mcp-hub', 'rate'))),
        cpu: stats(ratio(series('wispd', 'cpuUsPerCall'), series('mcp-hub', 'cpuUsPerCall'))),
      },
    },
    raw: Object.fromEntries(rounds),
  };
}
