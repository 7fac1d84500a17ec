import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WispClient } from '../../src/control/client.js';
import { shown, within } from './wait.js';
import { needs } from './skips.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const wispdBin = path.join(repoRoot, 'bin', 'wispd.js');
export const wispctlBin = path.join(repoRoot, 'bin', 'wispctl.js');

/** A temp dir under /tmp (short, so socket paths stay under the platform limit). */
export function tempDir(prefix = 'wisp-'): { path: string; remove: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunningDaemon {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly dataDir: string;
  readonly socket: string;
  /** Resolves with the exit code (or signal) when the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  connect(): Promise<WispClient>;
}

const live = new Set<ChildProcess>();

/** Kills every daemon a test started and did not stop (call from afterEach). */
export function killLeftovers(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Minimal environment for a spawned daemon: no inherited WISP_* or XDG runtime settings. */
export function daemonEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
  return env;
}

/** Starts bin/wispd.js and waits until it reports its socket listening (via --ready-fd). */
export async function startWispd(
  dataDir: string,
  options: {
    args?: string[];
    env?: NodeJS.ProcessEnv;
    /** A command that execs the daemon's (e.g. unshare into a mount namespace); the pid stays the daemon's. */
    wrap?: string[];
    /** false: no --data-dir flag (the daemon finds its data dir as a user's would; `dataDir` is then what the test expects). */
    dataDirFlag?: false;
  } = {},
): Promise<RunningDaemon> {
  const dataFlags = options.dataDirFlag === false ? [] : ['--data-dir', dataDir];
  const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
  const child = spawn(command, [...prefix, wispdBin, ...dataFlags, '--no-log-pretty', '--ready-fd', '3', ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: options.env ?? daemonEnv(),
  });
  live.add(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  const ready = await new Promise<{ socket: string } | undefined>((resolve) => {
    let text = '';
    const pipe = child.stdio[3] as NodeJS.ReadableStream;
    pipe.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n')[0];
      if (text.includes('\n') && line !== undefined) resolve(JSON.parse(line) as { socket: string });
    });
    pipe.on('end', () => resolve(undefined));
    pipe.on('error', () => resolve(undefined));
  });
  if (ready === undefined) {
    const exit = await exited;
    throw new Error(`wispd did not start (exit ${String(exit.code)}): ${out}`);
  }
  return {
    child,
    pid: child.pid ?? 0,
    dataDir,
    socket: ready.socket,
    exited,
    output: () => out,
    connect: () => WispClient.connect(ready.socket),
  };
}

/** Runs bin/wispd.js expecting it to fail at start; returns its exit code and output. */
export function runWispdExpectingExit(dataDir: string, args: string[] = [], env = daemonEnv()): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [wispdBin, '--data-dir', dataDir, '--no-log-pretty', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    live.add(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => {
      live.delete(child);
      resolve({ code, output });
    });
  });
}

/** Runs bin/wispctl.js to completion. */
export function runWispctl(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [wispctlBin, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? daemonEnv(), ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(options.input ?? '');
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A raw socket that sends bytes and collects parsed response lines, for protocol-level tests. */
export class RawClient {
  private buffer = '';
  /** Every byte received, as text: for tests that look for what must never be sent. */
  raw = '';
  private readonly messages: unknown[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];
  readonly closed: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.raw += chunk.toString('utf8');
      this.buffer += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        this.messages.push(JSON.parse(line));
      }
      this.wake();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    void this.closed.then(() => this.wake(true));
  }

  static connect(socketPath: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(socketPath);
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  request(id: number, method: string, params?: unknown): void {
    this.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })}\n`);
  }

  /** Waits until `count` messages have arrived in total (or the socket closed). */
  async waitFor(count: number): Promise<unknown[]> {
    if (this.messages.length < count && !this.socket.destroyed) {
      const arrived = new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
      await within(`${count} messages on the socket`, arrived, undefined, () => `${this.messages.length} messages, the last ${shown(this.messages.at(-1))}`);
    }
    return [...this.messages];
  }

  get received(): readonly unknown[] {
    return this.messages;
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(all = false): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (all || this.messages.length >= waiter.count) {
        waiter.resolve();
        return false;
      }
      return true;
    });
  }
}

/**
 * Linux: a process's environment and command line can be read from /proc. Checks that need
 * it are their own tests, `it.runIf(onLinux)`, so elsewhere they show up as skipped.
 */
export const onLinux = needs(process.platform === 'linux', 'not Linux: the tests that read a process\'s environment from /proc');

/** A process's environment as /proc shows it (NUL-separated NAME=value); Linux only. */
export function environOf(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'utf8');
}

/** Whether a pid is a live process; a zombie (exited, not yet reaped) counts as gone. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  let stat = '';
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/**
 * For a test file: a `home()` that makes a fresh temp dir, and an afterEach that kills any
 * daemon a test left running and removes every dir made.
 */
export function perTestHomes(afterEach: (fn: () => void) => void): () => string {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    killLeftovers();
    for (const fn of cleanups.splice(0)) fn();
  });
  return () => {
    const dir = tempDir();
    cleanups.push(dir.remove);
    return dir.path;
  };
}
