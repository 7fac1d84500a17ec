// npm run bench: each figure is measured in the same run as its baseline and reported as a
// ratio (median of several runs, with spread), never as a pass/fail threshold.
// Writes bench/results/latest.json and bench/results/latest.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispClient } from '../dist/control/client.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = path.join(root, 'fixtures', 'servers', 'scenario-server.mjs');
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
  return { median: q(0.5), p25: q(0.25), p75: q(0.75), min: sorted[0], max: sorted.at(-1), runs: sorted.length };
}

function compare(name, subject, baseline, note) {
  const s = stats(subject);
  const b = stats(baseline);
  const ratios = subject.map((v, i) => v / baseline[i]);
  return { name, note, unit: 'ms', subject: s, baseline: b, ratio: stats(ratios) };
}

async function startDaemon(dataDir) {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'wispd.js'), '--data-dir', dataDir, '--no-log-pretty', '--ready-fd', '3', '--stop-grace-ms', '200'], {
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  const line = await new Promise((resolve, reject) => {
    child.stdio[3].once('data', (b) => resolve(b.toString()));
    child.once('exit', (code) => reject(new Error(`wispd exited ${code}`)));
  });
  return { child, socket: JSON.parse(line).socket };
}

async function activation(dataDir) {
  const daemon = await startDaemon(dataDir);
  const client = await WispClient.connect(daemon.socket);
  const { service } = await client.call('services.register', { name: 'bench', command: process.execPath, args: [server, '--tools', '62'] });
  const viaDaemon = [];
  const direct = [];
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so drift on a shared machine hits both sides alike.
    let t = performance.now();
    const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    viaDaemon.push(performance.now() - t);
    if (active.connection.status !== 'active' || active.connection.toolCount !== 64) throw new Error(`activation failed: ${JSON.stringify(active.connection)}`);
    await client.call('services.disable', { id: service.id });

    t = performance.now();
    const sdk = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [server, '--tools', '62'], stderr: 'ignore' });
    await sdk.connect(transport);
    let cursor;
    let count = 0;
    do {
      const page = await sdk.listTools(cursor === undefined ? {} : { cursor });
      count += page.tools.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    direct.push(performance.now() - t);
    if (count !== 64) throw new Error(`direct listTools saw ${count} tools`);
    await sdk.close();
  }
  await client.call('daemon.shutdown');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
  return compare(
    'activation of a 64-tool stdio server',
    viaDaemon,
    direct,
    'services.activate through the socket (spawn, initialize, discovery, 64 schema compiles, events) vs a bare SDK Client connect + full listTools on the same server',
  );
}

function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
  return { p50: q(0.5), p99: q(0.99), n: sorted.length };
}

async function toolCalls(dataDir) {
  const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
  const CONCURRENCY = 16;
  const daemon = await startDaemon(dataDir);
  const approver = await WispClient.connect(daemon.socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await approver.call('events.subscribe', {});
  const { service } = await approver.call('services.register', { name: 'echo', command: process.execPath, args: [server] });
  await approver.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const callers = await Promise.all(Array.from({ length: CONCURRENCY }, () => WispClient.connect(daemon.socket)));
  const viaDaemon = (client, i) => client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: `call ${i}` } });

  const sdk = new Client({ name: 'bench', version: '1' });
  await sdk.connect(new StdioClientTransport({ command: process.execPath, args: [server], stderr: 'ignore' }));
  const direct = (i) => sdk.callTool({ name: 'echo', arguments: { text: `call ${i}` } });

  // Sequential round trips, interleaved in blocks of 50 so drift hits both sides alike.
  const daemonTimes = [];
  const directTimes = [];
  for (let block = 0; block < CALLS / 50; block++) {
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await viaDaemon(callers[0], i);
      daemonTimes.push(performance.now() - t);
    }
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await direct(i);
      directTimes.push(performance.now() - t);
    }
  }
  const d = percentiles(daemonTimes);
  const b = percentiles(directTimes);

  // Throughput with 16 concurrent callers (16 socket clients vs 16 in flight on one SDK client).
  const throughput = async (one) => {
    let next = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async (_, w) => {
      while (next < CALLS) await one(w, next++);
    }));
    return (CALLS / (performance.now() - t)) * 1000;
  };
  const daemonRates = [];
  const directRates = [];
  for (let round = 0; round < 3; round++) {
    daemonRates.push(await throughput((w, i) => viaDaemon(callers[w], i)));
    directRates.push(await throughput((_, i) => direct(i)));
  }
  await sdk.close();
  await approver.call('daemon.shutdown');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
  const rate = (xs) => stats(xs).median;
  return {
    name: 'tool call round trip (approval included)',
    note: `tools.call through the socket, an approver client answering each approval.requested event, vs a direct SDK callTool on the same server; ${CALLS} sequential calls each, then ${CALLS} calls from ${CONCURRENCY} concurrent callers (3 rounds)`,
    unit: 'ms',
    subject: d,
    baseline: b,
    ratio: { p50: d.p50 / b.p50, p99: d.p99 / b.p99 },
    throughput: { daemonPerSecond: rate(daemonRates), directPerSecond: rate(directRates), ratio: rate(daemonRates) / rate(directRates) },
  };
}

function timeCommand(args) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function cliStatus(dataDir) {
  const daemon = await startDaemon(dataDir);
  const minimal = `const s=require('net').createConnection(${JSON.stringify(daemon.socket)});s.on('connect',()=>s.write(JSON.stringify({jsonrpc:'2.0',id:1,method:'daemon.status'})+'\\n'));s.on('data',()=>s.end());`;
  const cli = [];
  const raw = [];
  for (let i = 0; i < RUNS; i++) {
    cli.push(await timeCommand([path.join(root, 'bin', 'wispctl.js'), '--socket', daemon.socket, 'status']));
    raw.push(await timeCommand(['-e', minimal]));
  }
  daemon.child.kill('SIGTERM');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
  return compare('wispctl status, wall time', cli, raw, 'the whole wispctl process vs a minimal node -e script that connects and sends one request');
}

const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wisp-bench-')));
try {
  const results = [await activation(path.join(dir, 'a')), await cliStatus(path.join(dir, 'b'))];
  const calls = await toolCalls(path.join(dir, 'c'));
  const report = { at: new Date().toISOString(), node: process.version, platform: `${process.platform} ${os.arch()}`, cpus: os.cpus().length, runs: RUNS, results, toolCalls: calls };
  writeFileSync(path.join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  const f = (n) => n.toFixed(1);
  const md = [
    '# Benchmark results',
    '',
    `Measured ${report.at} on ${report.platform}, ${report.cpus} CPUs, Node ${report.node}; ${RUNS} interleaved runs each. Reproduce with \`npm run bench\`.`,
    'Ratios are subject / baseline within the same run (median, with the 25th-75th percentile spread).',
    '',
    '| measurement | subject median (p25-p75) ms | baseline median (p25-p75) ms | ratio median (p25-p75) |',
    '|---|---|---|---|',
    ...results.map((r) => `| ${r.name} | ${f(r.subject.median)} (${f(r.subject.p25)}-${f(r.subject.p75)}) | ${f(r.baseline.median)} (${f(r.baseline.p25)}-${f(r.baseline.p75)}) | ${r.ratio.median.toFixed(2)} (${r.ratio.p25.toFixed(2)}-${r.ratio.p75.toFixed(2)}) |`),
    '',
    ...results.map((r) => `- **${r.name}**: ${r.note}.`),
    '',
    '## Tool calls',
    '',
    '| measurement | through the daemon | direct SDK | ratio |',
    '|---|---|---|---|',
    `| round trip p50 (ms) | ${f(calls.subject.p50)} | ${f(calls.baseline.p50)} | ${calls.ratio.p50.toFixed(2)} |`,
    `| round trip p99 (ms) | ${f(calls.subject.p99)} | ${f(calls.baseline.p99)} | ${calls.ratio.p99.toFixed(2)} |`,
    `| throughput, 16 concurrent callers (calls/s) | ${f(calls.throughput.daemonPerSecond)} | ${f(calls.throughput.directPerSecond)} | ${calls.throughput.ratio.toFixed(2)} |`,
    '',
    `- ${calls.note}.`,
    '',
  ].join('\n');
  writeFileSync(path.join(root, 'bench', 'results', 'latest.md'), md);
  console.log(md);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
