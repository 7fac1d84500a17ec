import { spawn } from 'node:child_process';
import { constants, promises as fs, openSync, closeSync, fstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { WispClient, WispPaths } from '../control/client.js';
import { connectClient } from './connect.js';
import { WispError, isErrorCode, type DaemonStatus, type ErrorCode } from '../core/index.js';
import { wispdPath } from './service-manager.js';
import { daemonLaunchEnv } from './daemon-env.js';

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
    client = await connectClient(socket);
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
  const dirProblem = ownProblem(await fs.lstat(paths.dataDir), 'directory');
  if (dirProblem !== undefined) throw unsafe(paths.dataDir, dirProblem, `if it is yours, make it private: chmod 700 ${paths.dataDir}`);
  const logFile = path.join(paths.dataDir, 'wispd.log');
  // Kept from growing without end: at each start, a log over the limit becomes wispd.log.1
  // (replacing the previous one). Under systemd or launchd their own log handling applies.
  const previous = await fs.lstat(logFile).catch(() => undefined);
  if (previous?.isFile() === true && previous.size > MAX_LOG_BYTES) await fs.rename(logFile, `${logFile}.1`);
  const logFd = openLog(logFile);
  const logStart = (await fs.stat(logFile)).size;
  const child = spawn(process.execPath, [wispdPath(), ...flags, '--no-log-pretty', '--ready-fd', '3'], {
    detached: true,
    stdio: ['ignore', logFd, logFd, 'pipe'],
    env: daemonLaunchEnv(process.env),
  });
  closeSync(logFd);
  const readyPipe = child.stdio[3] as NodeJS.ReadableStream;
  const line = await new Promise<string | undefined>((resolve) => {
    let text = '';
    readyPipe.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
    });
    readyPipe.on('end', () => resolve(text.includes('\n') ? text.slice(0, text.indexOf('\n')) : undefined));
    readyPipe.on('error', () => resolve(undefined));
  });
  const said = readyLine(line);
  if (said?.ready !== true) {
    const exitCode = await new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
    // wispd said why (ALREADY_RUNNING, UNSAFE_FILE, PATH_TOO_LONG...): that code, as wispd itself would exit with.
    if (said !== undefined && said.code !== undefined) throw new WispError(said.code, `wispd did not start: ${said.message}`, { logFile });
    const log = await fs.readFile(logFile, 'utf8').catch(() => '');
    const tail = log.slice(logStart).trim().split('\n').slice(-5).join('\n');
    throw new WispError('INTERNAL_ERROR', `wispd did not start (exit status ${String(exitCode)}). Last log lines:\n${tail}`, {
      logFile,
    });
  }
  child.unref();
  (readyPipe as unknown as { destroy(): void }).destroy();
  return { alreadyRunning: false, pid: child.pid ?? 0, socket: said.socket ?? paths.socket, logFile };
}

/** wispd's line on the ready fd: {ready: true, pid, socket} once it listens, {ready: false, code, message} when it could not start. */
function readyLine(line: string | undefined): { ready: boolean; socket?: string; code?: ErrorCode; message?: string } | undefined {
  if (line === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { ready, socket, code, message } = parsed as Record<string, unknown>;
  if (ready === true) return { ready: true, ...(typeof socket === 'string' ? { socket } : {}) };
  if (ready === false && isErrorCode(code)) return { ready: false, code, message: typeof message === 'string' ? message : code };
  return undefined;
}

/** Asks the daemon to shut down and waits until its process has exited. */
export async function stopDaemon(socket: string): Promise<{ wasRunning: boolean; pid: number | null }> {
  let client: WispClient;
  try {
    client = await connectClient(socket);
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

/**
 * The log is opened like every file of the daemon's (src/util/safe-file.ts, which wispctl
 * does not load): never through a symlink, and only if it is this user's own regular file
 * that group and others cannot write.
 */
function openLog(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw unsafe(file, 'it is a symlink');
    if (code === 'ENXIO') throw unsafe(file, 'it is not a regular file');
    throw error;
  }
  const problem = ownProblem(fstatSync(fd), 'file');
  if (problem !== undefined) {
    closeSync(fd);
    throw unsafe(file, problem);
  }
  return fd;
}

function ownProblem(stat: Stats, kind: 'file' | 'directory'): string | undefined {
  if (stat.isSymbolicLink()) return 'it is a symlink';
  if (kind === 'file' ? !stat.isFile() : !stat.isDirectory()) return `it is not a ${kind === 'file' ? 'regular file' : 'directory'}`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  const mode = `0${(stat.mode & 0o777).toString(8)}`;
  if (kind === 'directory' && (stat.mode & 0o077) !== 0) return `it is open to group or others (mode ${mode}); it must be private (0700)`;
  if ((stat.mode & 0o022) !== 0) return `it is writable by group or others (mode ${mode})`;
  if (kind === 'file' && stat.nlink > 1) return `it has ${stat.nlink} hard links (another name points at the same file)`;
  return undefined;
}

function unsafe(file: string, problem: string, fix = 'fix or remove it, then try again'): WispError {
  return new WispError('UNSAFE_FILE', `unsafe ${file}: ${problem}; nothing was read from it or written to it (${fix})`, { path: file, problem });
}
