import { spawn } from 'node:child_process';
import { promises as fs, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { WispClient, type WispPaths } from '../control/client.js';
import { WispError, type DaemonStatus } from '../control/protocol.js';
import { wispdPath } from './service-manager.js';

/** Starting and stopping a background wispd from the CLI. */

export interface StartResult {
  readonly alreadyRunning: boolean;
  readonly pid: number;
  readonly socket: string;
  readonly logFile: string | null;
}

export async function statusOrNull(socket: string): Promise<DaemonStatus | null> {
  let client: WispClient;
  try {
    client = await WispClient.connect(socket);
  } catch (error) {
    if (error instanceof WispError && error.code === 'DAEMON_NOT_RUNNING') return null;
    throw error;
  }
  try {
    return await client.call('daemon.status');
  } finally {
    await client.close();
  }
}

/** wispd.log larger than this is rotated when `wispctl daemon start` starts the daemon. */
export const MAX_LOG_BYTES = 10 * 1024 * 1024;

/**
 * Starts wispd detached, its output appended to <data>/wispd.log, and waits until it says
 * (on an inherited pipe) that its socket is listening, or exits.
 */
export async function startDaemon(paths: WispPaths, flags: readonly string[]): Promise<StartResult> {
  const running = await statusOrNull(paths.socket);
  if (running !== null) return { alreadyRunning: true, pid: running.pid, socket: running.paths.socket, logFile: null };

  await fs.mkdir(paths.dataDir, { recursive: true, mode: 0o700 });
  const logFile = path.join(paths.dataDir, 'wispd.log');
  // Kept from growing without end: at each start, a log over the limit becomes wispd.log.1
  // (replacing the previous one). Under systemd or launchd their own log handling applies.
  const previous = await fs.stat(logFile).catch(() => undefined);
  if (previous !== undefined && previous.size > MAX_LOG_BYTES) await fs.rename(logFile, `${logFile}.1`);
  const logFd = openSync(logFile, 'a', 0o600);
  const logStart = (await fs.stat(logFile)).size;
  const child = spawn(process.execPath, [wispdPath(), ...flags, '--no-log-pretty', '--ready-fd', '3'], {
    detached: true,
    stdio: ['ignore', logFd, logFd, 'pipe'],
    env: process.env,
  });
  closeSync(logFd);
  const readyPipe = child.stdio[3] as NodeJS.ReadableStream;
  const ready = await new Promise<boolean>((resolve) => {
    let text = '';
    readyPipe.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(true);
    });
    readyPipe.on('end', () => resolve(text.includes('\n')));
    readyPipe.on('error', () => resolve(false));
  });
  if (!ready) {
    const exitCode = await new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
    const log = await fs.readFile(logFile, 'utf8').catch(() => '');
    const tail = log.slice(logStart).trim().split('\n').slice(-5).join('\n');
    throw new WispError('INTERNAL_ERROR', `wispd did not start (exit status ${String(exitCode)}). Last log lines:\n${tail}`, {
      logFile,
    });
  }
  child.unref();
  (readyPipe as unknown as { destroy(): void }).destroy();
  return { alreadyRunning: false, pid: child.pid ?? 0, socket: paths.socket, logFile };
}

/** Asks the daemon to shut down and waits until its process has exited. */
export async function stopDaemon(socket: string): Promise<{ wasRunning: boolean; pid: number | null }> {
  let client: WispClient;
  try {
    client = await WispClient.connect(socket);
  } catch (error) {
    if (error instanceof WispError && error.code === 'DAEMON_NOT_RUNNING') return { wasRunning: false, pid: null };
    throw error;
  }
  const closed = new Promise<void>((resolve) => client.onClose(() => resolve()));
  const status = await client.call('daemon.status');
  await client.call('daemon.shutdown');
  await closed;
  await waitForExit(status.pid, 20_000);
  return { wasRunning: true, pid: status.pid };
}

async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 10; Date.now() < deadline; wait = Math.min(wait * 2, 200)) {
    if (!(await isRunning(pid))) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  throw new WispError('INTERNAL_ERROR', `wispd (pid ${pid}) was asked to stop but is still running after ${timeoutMs / 1000}s`);
}

/** A zombie (exited, not yet reaped by whoever adopted it) counts as exited. */
async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X' && stat !== '';
}
