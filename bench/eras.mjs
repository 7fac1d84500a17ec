// The eras bench (issue 36): what speaking MCP 2026-07-28 to a stdio server costs the host
// against speaking 2025 to the same server. The subjects are one server program
// (fixtures/servers/modern-server.mjs, on @modelcontextprotocol/server 2.4.0) started two ways:
//   2026   its default here (legacy: 'reject'): it refuses the host's 2025 `initialize` naming
//          2026-07-28, and the host speaks 2026 on the same process (server/discover, the _meta
//          envelope, subscriptions/listen, tools/call through the successor Client)
//   2025   `--dual` (the SDK's dual-era mode): it takes the 2025 `initialize`, and the host stays
//          on 2025 (the frozen SDK's Client, tools/call on the host's own call channel)
// and, for scale only (no ratio is taken against it), scenario-server, a 2025 server on the
// frozen SDK 1.x that the other parts use. All in one daemon, unsandboxed (the sandbox part
// measures bubblewrap; here it would only widen the spreads), interleaved round by round:
//   activation  one services.activate of each (64 tools) per round, then services.disable
//   calls       per round, on each (a few tools, all active at once), SEQ sequential tools.call
//               echo (p50, p95, p99), then PAR with CONCURRENCY in flight (calls/s, the daemon's
//               and the server's CPU per call from /proc), an approver answering each approval;
//               and, in the same rotation, the same server with no daemon: SEQ callTool from the
//               frozen SDK's Client (2025, on --dual) and from the successor's (2026), the floor
//   memory      two daemons side by side, one with the server speaking 2026, one with it
//               speaking 2025: RSS idle, after activation, after CALLS calls (alternating blocks)
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispClient } from '../dist/control/client.js';
import { RUNS, compare, cpuMs, deadline, envInt, exited, percentiles, quantile, root, rssKb, server, sleep, startDaemon, stats } from './common.mjs';

export const ERAS_SEQ = envInt('BENCH_ERAS_SEQ', 300);
export const ERAS_PAR = envInt('BENCH_ERAS_PAR', 1000);
export const ERAS_MEMORY_CALLS = envInt('BENCH_ERAS_MEMORY_CALLS', 2000);
export const ERAS_MEMORY_RUNS = envInt('BENCH_ERAS_MEMORY_RUNS', 3);
const CONCURRENCY = 16;
const PHASE_MS = 120_000;
const SETTLE_MS = 500;
const NO_SANDBOX = { enabled: false, read: [], write: [], net: { mode: 'none' } };
const modernServer = path.join(root, 'fixtures', 'servers', 'modern-server.mjs');
const V2026 = '2026-07-28';
const V2025 = '2025-11-25';

/** The three subjects: name, server arguments (before the tool count) and the revision its connection must speak. */
const SUBJECTS = [
  { name: '2026', args: [modernServer], protocolVersion: V2026 },
  { name: '2025', args: [modernServer, '--dual'], protocolVersion: V2025 },
  { name: 'scenario', args: [server], protocolVersion: V2025 },
];

const rotated = (list, r) => list.map((_, k) => list[(r + k) % list.length]);
const ratio = (a, b) => a.map((v, i) => v / b[i]);

/** A connection that approves every approval.requested it sees. */
async function approverOn(socket) {
  const approver = await WispClient.connect(socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await approver.call('events.subscribe', { types: ['approval.requested', 'approval.resolved'] });
  return approver;
}

async function register(client, subject, suffix, extraArgs) {
  const { service } = await client.call('services.register', { name: `${subject.name}${suffix}`, command: process.execPath, args: [...subject.args, ...extraArgs], sandbox: NO_SANDBOX });
  return { ...service, subject };
}

/** services.activate, checked: active, with `tools` tools, speaking the subject's revision. */
async function activate(client, service, tools) {
  const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const c = active.connection;
  if (c.status !== 'active' || (tools !== undefined && c.toolCount !== tools) || c.server?.protocolVersion !== service.subject.protocolVersion) {
    throw new Error(`${service.subject.name}: expected an active connection speaking ${service.subject.protocolVersion}${tools === undefined ? '' : ` with ${tools} tools`}, got ${JSON.stringify(c)}`);
  }
  return active;
}

async function activations(client) {
  // 64 tools: echo and one more on each server, and 62 numbered ones.
  const services = [];
  for (const subject of SUBJECTS) services.push(await register(client, subject, '-64', ['--tools', '62']));
  const times = new Map(SUBJECTS.map((s) => [s.name, []]));
  for (let r = -1; r < RUNS; r++) {
    for (const service of rotated(services, r + 1)) {
      const t = performance.now();
      await activate(client, service, 64);
      const ms = performance.now() - t;
      await client.call('services.disable', { id: service.id });
      // Round -1 warms up (the daemon's first spawn of each, the successor SDK's first load).
      if (r >= 0) times.get(service.subject.name).push(ms);
    }
  }
  return times;
}

async function checkedCall(caller, service, i) {
  const text = `call ${i}`;
  const result = await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text } });
  if (result.content[0]?.text !== text) throw new Error(`${service.subject.name}: echo answered ${JSON.stringify(result.content)} to ${JSON.stringify(text)}`);
}

async function timedSeq(what, call) {
  const times = [];
  for (let i = 0; i < ERAS_SEQ; i++) {
    const text = `call ${i}`;
    const t = performance.now();
    const got = await call(text);
    times.push(performance.now() - t);
    if (got !== text) throw new Error(`${what}: echo answered ${JSON.stringify(got)} to ${JSON.stringify(text)}`);
  }
  const p95 = quantile([...times].sort((a, b) => a - b), 0.95);
  return { ...percentiles(times), p95 };
}

async function parallel(callers, service, pid) {
  const serverPid = service.connection.pid;
  const cpu0 = cpuMs(pid);
  const server0 = serverPid === null ? null : cpuMs(serverPid);
  let next = 0;
  const t = performance.now();
  await Promise.all(callers.map(async (caller) => {
    while (next < ERAS_PAR) await checkedCall(caller, service, next++);
  }));
  const ms = performance.now() - t;
  const perCall = (before, now) => (before === null ? null : ((now - before) * 1000) / ERAS_PAR);
  return { rate: (ERAS_PAR / ms) * 1000, cpuUsPerCall: perCall(cpu0, cpuMs(pid)), serverCpuUsPerCall: server0 === null ? null : perCall(server0, cpuMs(serverPid)) };
}

/**
 * The same server and both eras with no daemon: an SDK Client in the bench process, the frozen
 * one on `--dual` (2025) and the successor one pinned to 2026-07-28: what the SDKs and the
 * server's two paths cost by themselves, the floor of the daemon's ratio.
 */
async function directSubjects() {
  const legacy = new Client({ name: 'bench', version: '1' });
  await legacy.connect(new StdioClientTransport({ command: process.execPath, args: [modernServer, '--dual'], stderr: 'ignore' }));
  const modern = new ModernClient({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: V2026 } } });
  await modern.connect(new ModernStdioClientTransport({ command: process.execPath, args: [modernServer], stderr: 'ignore' }));
  // The frozen Client speaks 2025 only (it connected, so the server took its initialize).
  if (modern.getNegotiatedProtocolVersion() !== V2026) throw new Error(`the direct 2026 Client negotiated ${String(modern.getNegotiatedProtocolVersion())}`);
  const text = async (result) => (await result).content[0]?.text;
  return [
    { name: 'sdk-2026', run: () => timedSeq('sdk-2026', (t) => text(modern.callTool({ name: 'echo', arguments: { text: t } }))), close: () => modern.close() },
    { name: 'sdk-2025', run: () => timedSeq('sdk-2025', (t) => text(legacy.callTool({ name: 'echo', arguments: { text: t } }))), close: () => legacy.close() },
  ];
}

async function calls(client, socket, pid) {
  const callers = await Promise.all(Array.from({ length: CONCURRENCY }, () => WispClient.connect(socket)));
  const runners = [];
  for (const subject of SUBJECTS) {
    const service = { ...(await activate(client, await register(client, subject, '-echo', []), undefined)), subject };
    runners.push({
      name: subject.name,
      run: async () => {
        const seq = await timedSeq(subject.name, async (text) => (await callers[0].call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text } })).content[0]?.text);
        const par = await deadline(parallel(callers, service, pid), PHASE_MS, `${subject.name}: ${ERAS_PAR} calls, ${CONCURRENCY} in flight`);
        return { ...seq, ...par };
      },
    });
  }
  const direct = await directSubjects();
  runners.push(...direct);
  const rounds = new Map(runners.map((s) => [s.name, []]));
  try {
    for (let r = -1; r < RUNS; r++) {
      for (const runner of rotated(runners, r + 1)) {
        const got = await deadline(runner.run(), PHASE_MS, `${runner.name}: ${ERAS_SEQ} sequential calls and the rest of its round`);
        if (r >= 0) rounds.get(runner.name).push(got);
      }
    }
  } finally {
    await Promise.all(callers.map((c) => c.close()));
    for (const d of direct) await d.close();
  }
  return rounds;
}

/** One run of the memory figure: a daemon per era, the same steps on each, alternating. */
async function memoryRun(dir, run) {
  const pair = SUBJECTS.slice(0, 2);
  const daemons = [];
  try {
    for (const subject of pair) {
      const started = await startDaemon(path.join(dir, `memory-${run}-${subject.name}`));
      daemons.push({ subject, started, client: await approverOn(started.socket), caller: null, service: null, readings: {} });
    }
    const read = async (key) => {
      await sleep(SETTLE_MS);
      for (const d of daemons) d.readings[key] = rssKb(d.started.child.pid);
    };
    await read('idleKb');
    for (const d of daemons) {
      d.service = { ...(await activate(d.client, await register(d.client, d.subject, '', []), undefined)), subject: d.subject };
      d.caller = await WispClient.connect(d.started.socket);
    }
    await read('activeKb');
    const BLOCKS = 10;
    const block = Math.ceil(ERAS_MEMORY_CALLS / BLOCKS);
    for (let b = 0; b < BLOCKS; b++) {
      for (const d of rotated(daemons, b)) {
        await deadline((async () => {
          for (let i = b * block; i < Math.min(ERAS_MEMORY_CALLS, (b + 1) * block); i++) await checkedCall(d.caller, d.service, i);
        })(), PHASE_MS, `${d.subject.name}: a block of calls for the memory figure`);
      }
    }
    await read('afterCallsKb');
  } finally {
    for (const d of daemons) {
      await d.caller?.close();
      await d.client.call('daemon.shutdown');
      await exited(d.started.child);
    }
  }
  return Object.fromEntries(daemons.map((d) => [d.subject.name, d.readings]));
}

export async function eraCosts(dir) {
  const daemon = await startDaemon(path.join(dir, 'wispd'));
  const client = await approverOn(daemon.socket);
  let act;
  let call;
  try {
    act = await activations(client);
    call = await calls(client, daemon.socket, daemon.child.pid);
  } finally {
    await client.call('daemon.shutdown');
    await exited(daemon.child);
  }
  const runs = [];
  for (let run = 0; run < ERAS_MEMORY_RUNS; run++) runs.push(await memoryRun(dir, run));
  const series = (name, key) => call.get(name).map((x) => x[key]);
  const memory = Object.fromEntries(['2026', '2025'].map((name) => [name, Object.fromEntries(['idleKb', 'activeKb', 'afterCallsKb'].map((k) => [k, stats(runs.map((r) => r[name][k])).median]))]));
  return {
    name: 'eras',
    rounds: RUNS,
    seq: ERAS_SEQ,
    par: ERAS_PAR,
    concurrency: CONCURRENCY,
    activation: {
      ...compare('activation of a 64-tool stdio server, 2026 / 2025', act.get('2026'), act.get('2025'), 'services.activate of modern-server.mjs (64 tools) refusing initialize for 2026-07-28 vs the same server with --dual, taking it'),
      scenario: stats(act.get('scenario')),
    },
    calls: {
      subjects: Object.fromEntries([...call.keys()].map((name) => [name, Object.fromEntries(Object.keys(call.get(name)[0]).filter((k) => k !== 'n').map((k) => [k, stats(series(name, k))]))])),
      ratio: Object.fromEntries(['p50', 'p95', 'p99', 'rate', 'cpuUsPerCall', 'serverCpuUsPerCall'].map((k) => [k, stats(ratio(series('2026', k), series('2025', k)))])),
      sdkRatio: Object.fromEntries(['p50', 'p95', 'p99'].map((k) => [k, stats(ratio(series('sdk-2026', k), series('sdk-2025', k)))])),
    },
    memory: { calls: ERAS_MEMORY_CALLS, runs: ERAS_MEMORY_RUNS, ...memory, raw: runs },
    note: `${RUNS} rounds after one warm-up round, subjects in rotating order, one daemon, every service unsandboxed. 2026: fixtures/servers/modern-server.mjs (@modelcontextprotocol/server 2.4.0, legacy 'reject'), which refuses the host's initialize and is then spoken to in 2026-07-28 on the same process; 2025: the same server with --dual (the SDK's dual-era mode), spoken to in 2025-11-25; scenario: scenario-server.mjs on the frozen SDK 1.x, for scale only. Each connection's revision is checked at every activation. Activation: one services.activate of each (64 tools) per round. Calls: per round, on each (all three active, a few tools each), ${ERAS_SEQ} sequential tools.call echo (p50, p95, p99), then ${ERAS_PAR} with ${CONCURRENCY} in flight (calls/s; the daemon's and, apart, the server's CPU per call from /proc/PID/stat), an approver connection answering each approval; in the same rotation, with no daemon, ${ERAS_SEQ} sequential callTool echo from an SDK Client in the bench process on the same server, the frozen SDK 1.x Client on --dual (sdk-2025) and the successor @modelcontextprotocol/client 2.4.0 pinned to 2026-07-28 (sdk-2026): the SDKs' and the server's own share; every answer checked. Memory: a daemon per era side by side, fresh each run, the median of ${ERAS_MEMORY_RUNS} runs of: RSS idle, with the one service active, and after ${ERAS_MEMORY_CALLS} sequential calls made in alternating blocks`,
  };
}
