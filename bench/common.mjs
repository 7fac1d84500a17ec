// Helpers shared by the bench parts: statistics, /proc readings, starting wispd and the
// minimal relay, and a registry of spawned processes so a failing run kills what it started.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { daemonLaunchEnv } from '../dist/cli/daemon-env.js';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const server = path.join(root, 'fixtures', 'servers', 'scenario-server.mjs');
/** A positive integer from the environment: a typo must stop the run, not turn every figure into NaN. */
export function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${raw}: expected a positive integer`);
  return n;
}

/** Rounds for every interleaved comparison; the issue asks for at least 10. */
export const RUNS = envInt('BENCH_RUNS', 12);

export function quantile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
}

export function stats(samples) {
  const sorted = samples.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return { median: quantile(sorted, 0.5), p25: quantile(sorted, 0.25), p75: quantile(sorted, 0.75), min: sorted[0], max: sorted.at(-1), runs: sorted.length };
}

export function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: sorted.length };
}

/** Subject and baseline samples taken in pairs (same round): each ratio is taken within its round. */
export function compare(name, subject, baseline, note) {
  return { name, note, unit: 'ms', subject: stats(subject), baseline: stats(baseline), ratio: stats(subject.map((v, i) => v / baseline[i])) };
}

const PROC = existsSync('/proc/self/stat');
// USER_HZ: 100 on every Linux architecture Node supports.
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, all threads) of a process in ms, or null without /proc. */
export function cpuMs(pid) {
  if (!PROC) return null;
  // Fields after the command name, which may hold spaces: state is [0], utime [11], stime [12].
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

export function rssKb(pid) {
  if (!PROC) return null;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects with a clear message when `promise` takes longer than `ms`: a stuck subject must fail the run, not hang it. */
export function deadline(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const children = new Set();

/** Spawns and remembers a process until it exits, so killAll() can end it if the run fails. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

export function exited(child) {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
}

/** Spawns a process that writes {"socket":...} on fd 3 when it listens (wispd --ready-fd 3, bench/relay.mjs) and waits for that line. */
async function startWithReadyFd(what, args, env = { PATH: process.env.PATH, HOME: process.env.HOME }) {
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit', 'pipe'], env }));
  const line = await deadline(
    new Promise((resolve, reject) => {
      child.stdio[3].once('data', (b) => resolve(b.toString()));
      child.once('exit', (code, signal) => reject(new Error(`${what} exited (${code ?? signal}) before it was ready`)));
    }),
    30_000,
    `${what} start`,
  ).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  return { child, socket: JSON.parse(line).socket };
}

export function startDaemon(dataDir) {
  // In the environment `wispctl daemon start` gives it (daemonLaunchEnv: glibc's malloc arenas capped), PATH and HOME only besides.
  return startWithReadyFd('wispd', [path.join(root, 'bin', 'wispd.js'), '--data-dir', dataDir, '--no-log-pretty', '--ready-fd', '3', '--stop-grace-ms', '200'], daemonLaunchEnv({ PATH: process.env.PATH, HOME: process.env.HOME }));
}

/** bench/relay.mjs on `socket`, relaying to one scenario-server. */
export function startRelay(socket, serverArgs = []) {
  return startWithReadyFd('the minimal relay', [path.join(root, 'bench', 'relay.mjs'), socket, process.execPath, server, ...serverArgs]);
}
