// Memory: RSS of wispd and of mcp-hub in the same three states on the same servers (idle;
// 16 services of which 3 active with 32 tools each = 96 tools; after N sequential calls),
// a bare Node process for scale, and the heap-check (is the heap flat from block to block?).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { WispClient } from '../dist/control/client.js';
import { deadline, envInt, exited, root, rssKb, server, sleep, startDaemon, track } from './common.mjs';
import { MCP_HUB_VERSION, startMcpHub } from './mcp-hub.mjs';

const CALLS = envInt('BENCH_MEMORY_CALLS', 10_000);
// Each subject's readings are the median of this many runs (a fresh process each, wispd and
// mcp-hub alternating): one run's figure after the calls depends on where V8's collection
// cycle happens to stand, a few MB either way.
const MEMORY_RUNS = envInt('BENCH_MEMORY_RUNS', 3);
// Both processes get the same pause before each reading, so neither is caught mid-startup.
const SETTLE_MS = 500;
// A second reading after the calls, once V8's own memory reducer has had its turn: it starts
// about 8 s after a full collection, when allocation has dropped (the daemon idle again).
const IDLE_MS = 12_000;
const SERVICES = 16;
const ACTIVE = 3;
const EXTRA_TOOLS = 30; // echo + env + 30 = 32 tools per active service, 96 in all
const toolArgs = (i) => [server, '--tools', String(i < ACTIVE ? EXTRA_TOOLS : 0)];

async function wispdMemory(dataDir) {
  const daemon = await startDaemon(dataDir);
  const client = await WispClient.connect(daemon.socket);
  await sleep(SETTLE_MS);
  const idle = rssKb(daemon.child.pid);
  const services = [];
  for (let i = 0; i < SERVICES; i++) services.push((await client.call('services.register', { name: `m-${i}`, command: process.execPath, args: toolArgs(i) })).service);
  for (const service of services.slice(0, ACTIVE)) await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const status = await client.call('daemon.status');
  if (status.counts.activeTools !== ACTIVE * (EXTRA_TOOLS + 2)) throw new Error(`wispd: expected ${ACTIVE * (EXTRA_TOOLS + 2)} active tools, got ${status.counts.activeTools}`);
  await sleep(SETTLE_MS);
  const loaded = rssKb(daemon.child.pid);
  client.onEvent((event) => {
    if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await client.call('events.subscribe', { types: ['approval.requested', 'approval.resolved'] });
  const caller = await WispClient.connect(daemon.socket);
  await deadline((async () => {
    for (let i = 0; i < CALLS; i++) {
      const result = await caller.call('tools.call', { serviceId: services[0].id, toolName: 'echo', arguments: { text: `m${i}` } });
      if (result.content[0].text !== `m${i}`) throw new Error(`wispd: echo answered ${JSON.stringify(result.content)}`);
    }
  })(), 300_000, `wispd: ${CALLS} calls for the memory figure`);
  await sleep(SETTLE_MS);
  const afterCalls = rssKb(daemon.child.pid);
  await sleep(IDLE_MS - SETTLE_MS);
  const afterIdle = rssKb(daemon.child.pid);
  await client.call('daemon.shutdown');
  await exited(daemon.child);
  return { idleKb: idle, loadedKb: loaded, afterCallsKb: afterCalls, afterIdleKb: afterIdle };
}

async function mcpHubMemory(dir) {
  // Idle: no servers configured.
  const empty = await startMcpHub({ dir: path.join(dir, 'idle'), config: { mcpServers: {} } });
  await sleep(SETTLE_MS);
  const idle = rssKb(empty.child.pid);
  await empty.stop();
  // The same 16 servers from its config, 13 of them disabled (as registered-but-inactive in wispd).
  const mcpServers = Object.fromEntries(Array.from({ length: SERVICES }, (_, i) => [`m-${i}`, { command: process.execPath, args: toolArgs(i), ...(i < ACTIVE ? {} : { disabled: true }) }]));
  const hub = await startMcpHub({ dir: path.join(dir, 'loaded'), config: { mcpServers } });
  try {
    const health = await hub.health();
    const tools = health.servers.filter((s) => s.status === 'connected').reduce((n, s) => n + (s.capabilities?.tools?.length ?? 0), 0);
    if (tools !== ACTIVE * (EXTRA_TOOLS + 2)) throw new Error(`mcp-hub: expected ${ACTIVE * (EXTRA_TOOLS + 2)} tools on connected servers, got ${tools}`);
    await sleep(SETTLE_MS);
    const loaded = rssKb(hub.child.pid);
    await deadline((async () => {
      for (let i = 0; i < CALLS; i++) {
        const result = await hub.call('m-0', 'echo', { text: `m${i}` });
        if (result.content[0].text !== `m${i}`) throw new Error(`mcp-hub: echo answered ${JSON.stringify(result.content)}`);
      }
    })(), 300_000, `mcp-hub: ${CALLS} calls for the memory figure`);
    await sleep(SETTLE_MS);
    const afterCalls = rssKb(hub.child.pid);
    await sleep(IDLE_MS - SETTLE_MS);
    return { idleKb: idle, loadedKb: loaded, afterCallsKb: afterCalls, afterIdleKb: rssKb(hub.child.pid) };
  } finally {
    await hub.stop();
  }
}

async function bareNodeKb() {
  const bare = track(spawn(process.execPath, ['-e', "setInterval(() => {}, 1000); require('fs').writeSync(3, 'ready\\n')"], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] }));
  await new Promise((resolve) => bare.stdio[3].once('data', resolve));
  await sleep(SETTLE_MS);
  const kb = rssKb(bare.pid);
  bare.kill();
  await exited(bare);
  return kb;
}

/** bench/heap-check.mjs: a daemon in-process with --expose-gc, heap after a full GC after each block of calls. */
function heapCheck() {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, ['--expose-gc', path.join(root, 'bench', 'heap-check.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] }));
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`bench/heap-check.mjs exited ${code}`))));
  });
}

/** Flat: after the first block (bounded histories filling), the heap grows by at most 0.5 MB over the remaining blocks. */
export const HEAP_FLAT_BYTES = 512 * 1024;

/** Per reading, the median over the runs; `runs` keeps each run's readings. */
function medians(runs) {
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const keys = Object.keys(runs[0]);
  return { ...Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))])), runs };
}

export async function memory(dir) {
  const wispdRuns = [];
  const hubRuns = [];
  for (let i = 0; i < MEMORY_RUNS; i++) {
    wispdRuns.push(await wispdMemory(path.join(dir, `wispd-${i}`)));
    hubRuns.push(await mcpHubMemory(path.join(dir, `mcp-hub-${i}`)));
  }
  const wispd = medians(wispdRuns);
  const hub = medians(hubRuns);
  const bare = await bareNodeKb();
  const heap = await heapCheck();
  const settled = heap.heapUsedAfterGc.slice(1);
  heap.growthAfterFirstBlock = Math.max(...settled) - settled[0];
  heap.flat = heap.growthAfterFirstBlock <= HEAP_FLAT_BYTES;
  return {
    note: `RSS from /proc/PID/status, the median of ${MEMORY_RUNS} runs (a fresh process each, the subjects alternating), ${SETTLE_MS} ms after each state is reached, and once more ${IDLE_MS / 1000} s after the calls (both idle; V8's memory reducer may have run by the second, when it started a cycle; the target is the figure at ${SETTLE_MS} ms). Loaded: ${SERVICES} services configured, ${ACTIVE} active with ${EXTRA_TOOLS + 2} tools each (mcp-hub ${MCP_HUB_VERSION}: the same servers in its config, the other ${SERVICES - ACTIVE} disabled). Calls: ${CALLS} sequential echo calls (wispd: tools.call with an approver; mcp-hub: POST /api/servers/tools)`,
    calls: CALLS,
    runs: MEMORY_RUNS,
    idleMs: IDLE_MS,
    bareNodeKb: bare,
    wispd,
    mcpHub: hub,
    heap,
  };
}
