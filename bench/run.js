// npm run bench: each figure is measured in the same run as its baseline (and, for tool calls,
// the minimal relay and mcp-hub as floor and peer) and reported as a ratio: the median of
// interleaved rounds, with spread. Writes bench/results/latest.json and latest.md, whose
// first table holds the targets of issue 14 (met or not: the run does not fail on a miss).
// It does fail, non-zero and with the reason, if any subject breaks or stalls.
//
// BENCH_ONLY=calls,gateway,activation,cli,coldstart,memory,stream,installs,sandbox,eras runs just those parts and
// prints their report instead of writing latest.*; `node bench/merge.mjs FILE` puts the parts of such
// a printed report into latest.* (each marked with its own date and load). Other knobs: BENCH_RUNS (rounds, default 12),
// BENCH_SEQ / BENCH_PAR (calls per round), BENCH_MEMORY_CALLS, BENCH_MEMORY_RUNS, BENCH_HEAP_BLOCK(S),
// BENCH_PIECES, BENCH_INSTALL_RUNS, BENCH_GATEWAY_SEQ / BENCH_GATEWAY_PAR, BENCH_SANDBOX_SEQ, BENCH_EGRESS_REQUESTS,
// BENCH_ERAS_SEQ / BENCH_ERAS_PAR, BENCH_ERAS_MEMORY_CALLS, BENCH_ERAS_MEMORY_RUNS.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RUNS, killAll, root } from './common.mjs';
import { toolCalls } from './calls.mjs';
import { eraCosts } from './eras.mjs';
import { gatewayCalls } from './gateway.mjs';
import { installs } from './installs.mjs';
import { memory } from './memory.mjs';
import { markdown, targets } from './report.mjs';
import { sandboxCosts } from './sandbox.mjs';
import { activation, cliStatus, coldStart } from './startup.mjs';
import { modelStream } from './stream.mjs';

const PARTS = ['calls', 'gateway', 'activation', 'cli', 'coldstart', 'memory', 'stream', 'installs', 'sandbox', 'eras'];
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((p) => !PARTS.includes(p)) ?? [];
if (unknown.length > 0) {
  console.error(`bench: unknown BENCH_ONLY part(s) ${unknown.join(', ')}; the parts are ${PARTS.join(', ')}`);
  process.exit(2);
}
const wanted = (part) => !only || only.includes(part);

const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wisp-bench-')));
let part = 'setup';
// Each part is announced on stderr, so a failure names the part it happened in.
const step = async (name, fn) => {
  part = name;
  const t = performance.now();
  console.error(`bench: ${name}...`);
  mkdirSync(path.join(dir, name), { mode: 0o700 });
  const result = await fn(path.join(dir, name));
  console.error(`bench: ${name} done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return result;
};

const fail = (error) => {
  console.error(`\nbench FAILED in part "${part}": ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  console.error('No results were written.');
};
// A subject that dies can surface as an error no await is waiting for (a reset socket):
// that must fail the run the same way, and take every process the bench started with it.
process.on('uncaughtException', (error) => {
  fail(error);
  process.exit(1);
});
process.on('unhandledRejection', (error) => {
  fail(error);
  process.exit(1);
});
process.on('exit', () => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

let status = 0;
try {
  const report = { at: new Date().toISOString(), node: process.version, platform: `${process.platform} ${os.arch()}`, cpus: os.cpus().length, runs: RUNS, loadAvgBefore: os.loadavg() };
  // Tool calls first: the figures the issue is about, taken before the other parts heat the machine.
  if (wanted('calls')) report.toolCalls = await step('calls', toolCalls);
  if (wanted('gateway')) report.gateway = await step('gateway', gatewayCalls);
  const results = [];
  if (wanted('activation')) results.push(await step('activation', activation));
  if (wanted('cli')) results.push(await step('cli', cliStatus));
  if (wanted('coldstart')) results.push(await step('coldstart', coldStart));
  if (wanted('installs')) results.push(...(await step('installs', installs)));
  if (results.length > 0) report.results = results;
  if (wanted('sandbox')) report.sandbox = await step('sandbox', sandboxCosts);
  if (wanted('eras')) report.eras = await step('eras', eraCosts);
  if (wanted('stream')) report.stream = await step('stream', modelStream);
  if (wanted('memory')) report.memory = await step('memory', memory);
  // The load averages bracket the run: figures from a machine busy with other work are not final.
  report.loadAvgAfter = os.loadavg();
  report.targets = targets(report);
  const md = markdown(report);
  if (only) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    writeFileSync(path.join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(root, 'bench', 'results', 'latest.md'), md);
  }
  console.log(md);
} catch (error) {
  fail(error);
  status = 1;
}
// Exit explicitly (the exit handler kills what is left): a broken subject may leave sockets or timers open.
process.exit(status);
