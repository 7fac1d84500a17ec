import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { WispError, type ErrorCode } from '../core/index.js';
import { BwrapInfo, LineSplitter, groupRunning, killPid, namespaceRunning, pidNamespaceOf, textNestsDeeperThan } from '../util/index.js';
import { unhandledMessage, type TransportFailure } from './failure.js';
import type { StderrTail } from './stderr-tail.js';

export interface StdioLaunch {
  /** Absolute path (resolved before launch). */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  /** The complete environment of the child: nothing else is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** Set when the command is a sandbox launcher (sandbox/host.ts) around the server. */
  readonly sandbox?: SandboxedLaunch | undefined;
}

export interface SandboxedLaunch {
  /**
   * fd 3 carries bwrap's info (JSON with "child-pid", the sandbox's init as the daemon sees
   * it): the stop ladder's SIGTERM goes to that process group, the server's, since bwrap
   * itself passes no signal on (a SIGTERM to bwrap ends the sandbox at once).
   */
  readonly infoFd: boolean;
  /** Written to fds 4, 5, ... at spawn, then closed: files the sandbox is made with (its one-user passwd, group). */
  readonly inputs: readonly string[];
  /** Told once the server has ended (a private directory to remove). */
  readonly onEnd?: (() => void) | undefined;
}

export interface StopLadder {
  /** After closing stdin, how long to wait before SIGTERM. */
  readonly stdinGraceMs: number;
  /** After SIGTERM, how long to wait before SIGKILL. */
  readonly termGraceMs: number;
}

/** Told when a server's process group starts and when it is empty again (the daemon records running servers). */
export interface ProcessTracker {
  started(pid: number): void;
  ended(pid: number): void;
}

/** After the leader exits, how long stdout may still deliver what it wrote before the close is reported. */
const EXIT_DRAIN_MS = 200;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The stdio transport, our own rather than the SDK's StdioClientTransport:
 * - an exact per-frame cap (the SDK bounds buffered bytes, not a frame) via LineSplitter;
 * - the child is spawned in its own process group (detached) and stopped by signalling the
 *   whole group, so npx-style wrappers and grandchildren do not survive as orphans;
 * - stderr is always drained into a bounded tail (an undrained pipe deadlocks a server);
 * - the environment is exactly what the caller passes, never the daemon's.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  private child: ChildProcessWithoutNullStreams | undefined;
  private started: Promise<void> | undefined;
  private exited: Promise<void> | undefined;
  private hasExited = false;
  private exitDescription = '';
  private stopping: Promise<void> | undefined;
  private forceStop: (() => void) | undefined;
  private closedReported = false;
  /** A sandboxed server's own process group (bwrap's info), once known. */
  private innerGroup: number | undefined;
  /** Settles once bwrap's info has been read or its fd closed (a sandboxed launch only). */
  private innerKnown: Promise<void> | undefined;
  /** The sandbox's pid namespace (read from its init as soon as its pid is known): the stop ends when nothing runs in it. */
  private innerNamespace: string | undefined;
  /** Why the transport closed on its own (frame too large, garbage, exit), if it did. */
  failure: TransportFailure | undefined;

  constructor(
    private readonly launch: StdioLaunch,
    private readonly options: {
      readonly maxFrameBytes: number;
      /** A frame nesting deeper than this is refused on its text, unparsed. */
      readonly maxFrameNesting: number;
      readonly ladder: StopLadder;
      readonly stderr: StderrTail;
      /** Known secret values out of the excerpt of a bad line (redacted before it is cut). */
      readonly redact?: ((text: string) => string) | undefined;
      readonly tracker?: ProcessTracker | undefined;
    },
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get exitInfo(): string {
    return this.exitDescription;
  }

  /** Spawns the server. Idempotent: we start it to see the pid, then the SDK's connect() calls it again. */
  start(): Promise<void> {
    this.started ??= this.spawnChild();
    return this.started;
  }

  private spawnChild(): Promise<void> {
    return new Promise((resolve, reject) => {
      const sandbox = this.launch.sandbox;
      const extra = sandbox === undefined ? [] : ['pipe' as const, ...sandbox.inputs.map(() => 'pipe' as const)];
      const child = spawn(this.launch.command, [...this.launch.args], {
        cwd: this.launch.cwd,
        env: { ...this.launch.env },
        shell: false,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', ...extra],
        windowsHide: true,
      });
      this.child = child;
      if (sandbox !== undefined) this.feedSandbox(child, sandbox);
      this.exited = new Promise((resolveExit) => {
        child.once('exit', (code, signal) => {
          this.hasExited = true;
          this.exitDescription = signal !== null ? `killed by ${signal}` : `exit status ${String(code)}`;
          resolveExit();
          this.onLeaderExit();
        });
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) this.options.tracker?.started(child.pid);
        resolve();
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) {
          this.hasExited = true;
          reject(spawnError(error, this.launch.command));
        } else this.onerror?.(error);
      });
      const splitter = new LineSplitter(
        this.options.maxFrameBytes,
        (frame) => this.onFrame(frame),
        (bytes) =>
          this.fail('FRAME_TOO_LARGE', `the server sent a frame of more than ${this.options.maxFrameBytes} bytes (${bytes} seen)`),
      );
      child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => this.options.stderr.push(chunk));
      child.stdin.on('error', () => undefined); // EPIPE after the child exits: the exit is what we report
      child.stdout.on('error', () => undefined);
      child.stderr.on('error', () => undefined);
      child.once('close', () => this.reportClosed());
    });
  }

  /** The sandbox's inputs go in and its info comes out on the extra fds; nothing more is read from them. */
  private feedSandbox(child: ChildProcessWithoutNullStreams, sandbox: SandboxedLaunch): void {
    const streams = child.stdio as unknown as (NodeJS.ReadWriteStream | null)[];
    sandbox.inputs.forEach((input, i) => {
      const stream = streams[4 + i];
      stream?.on('error', () => undefined);
      stream?.end(input);
    });
    const info = streams[3];
    if (info === null || info === undefined) return;
    info.on('error', () => undefined);
    if (!sandbox.infoFd) {
      info.end();
      return;
    }
    const parsed = new BwrapInfo();
    let known = (): void => undefined;
    this.innerKnown = new Promise<void>((resolve) => (known = resolve));
    info.once('close', known);
    info.on('data', (chunk: Buffer) => {
      const pid = parsed.add(chunk);
      if (pid !== undefined && this.innerGroup === undefined) {
        this.innerGroup = pid;
        this.innerNamespace = pidNamespaceOf(this.innerGroup);
        known();
      }
    });
  }

  private corked = false;
  private readonly uncork = (stdin: Writable): void => {
    this.corked = false;
    stdin.uncork();
  };

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    // After the leader's exit nothing is sent, even though a child may still hold its stdin.
    if (stdin === undefined || stdin.destroyed || !stdin.writable || this.stopping !== undefined || this.hasExited) {
      throw new WispError('SERVER_EXITED', 'the server is not running');
    }
    // The messages sent in one run of the microtask queue (calls released by one batch of
    // approvals) leave in one write: corked until the tick queue runs, which is before any
    // I/O callback, so nothing read from the server (a list_changed) can come between a
    // message's checks and its leaving.
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(this.uncork, stdin);
    }
    if (!stdin.write(`${JSON.stringify(message)}\n`)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stdin.off('drain', done);
          stdin.off('close', done);
          resolve();
        };
        stdin.on('drain', done);
        stdin.on('close', done);
      });
    }
  }

  /** The stop ladder: stdin closed -> SIGTERM to the group -> SIGKILL to the group. */
  close(): Promise<void> {
    return this.stop(false);
  }

  /**
   * Stops the server. A second call while stopping (or `force`) skips to SIGKILL. Resolves
   * once the process has exited and its group is empty (or after the final SIGKILL).
   */
  stop(force: boolean): Promise<void> {
    if (this.stopping !== undefined) {
      if (force) this.forceStop?.();
      return this.stopping;
    }
    this.stopping = this.runLadder(force).finally(() => this.reportClosed());
    return this.stopping;
  }

  private async runLadder(force: boolean): Promise<void> {
    const child = this.child;
    if (child === undefined || child.pid === undefined) return;
    const pid = child.pid;
    let forced = force;
    const forcedPromise = new Promise<void>((resolve) => {
      this.forceStop = () => {
        forced = true;
        resolve();
      };
      if (force) resolve();
    });
    const waitExit = (ms: number): Promise<boolean> =>
      this.hasExited ? Promise.resolve(true) : raceTimeout(this.exited ?? Promise.resolve(), ms, forcedPromise).then(() => this.hasExited);

    if (!forced && !this.hasExited) {
      child.stdin.end();
      await waitExit(this.options.ladder.stdinGraceMs);
    }
    if (!forced && !this.hasExited) {
      // Sandboxed: the server's own group (bwrap would end the sandbox at once, passing nothing on).
      await this.sandboxInit();
      signalGroup(this.innerGroup ?? pid, 'SIGTERM');
      await waitExit(this.options.ladder.termGraceMs);
    }
    if (!this.hasExited) {
      // The sandbox's init first: its death ends everything in the sandbox's pid namespace.
      await this.sandboxInit();
      if (this.innerGroup !== undefined) killPid(this.innerGroup);
      signalGroup(pid, 'SIGKILL');
      await raceTimeout(this.exited ?? Promise.resolve(), 5000);
    }
    // The leader is gone; whatever it left in its group (grandchildren) goes too.
    if (groupAlive(pid)) {
      signalGroup(pid, 'SIGTERM');
      await waitGroupEmpty(pid, forced ? 0 : this.options.ladder.termGraceMs);
      if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
    }
    // Sandboxed: the sandbox's own group (its init and all it runs) dies with the init; the
    // stop ends when it has (a namespace takes a moment to tear down after bwrap is gone).
    if (this.innerGroup !== undefined && groupAlive(this.innerGroup) && (await groupRunning(this.innerGroup))) {
      signalGroup(this.innerGroup, 'SIGKILL');
      await waitGroupEmpty(this.innerGroup, 1000);
    }
    // The kernel kills everything in the sandbox with its init, but they finish exiting a
    // moment later, and a server may have made groups of its own: the namespace is what says
    // all of them have gone.
    if (this.innerNamespace !== undefined) await waitNamespaceEmpty(this.innerNamespace, 2000);
    // A group that still runs after SIGKILL (a process stuck in the kernel) stays on record for the next start.
    if (this.options.tracker !== undefined) {
      await waitGroupEmpty(pid, 1000);
      if (!(await groupRunning(pid))) this.options.tracker.ended(pid);
    }
  }

  /**
   * A sandboxed server's init pid, waited for when it is not known yet: bwrap signalled while
   * it still sets the sandbox up dies and leaves that init running (its --die-with-parent
   * does not hold then), in a session of its own that the group's signals miss. bwrap writes
   * the pid as soon as it has cloned; at most 5 s, or until bwrap exits.
   */
  private async sandboxInit(): Promise<void> {
    if (this.innerKnown === undefined || this.innerGroup !== undefined || this.hasExited) return;
    await raceTimeout(this.innerKnown, 5000, this.exited);
  }

  /**
   * The leader exited on its own. Its children may hold stdout open, so the close of the
   * pipes says nothing: the server is gone now. What it wrote just before exiting gets a
   * moment to arrive, then the close is reported and the group swept (the stop ladder).
   */
  private onLeaderExit(): void {
    if (this.stopping !== undefined) return;
    const child = this.child;
    const drained = new Promise<void>((resolve) => {
      if (child === undefined || child.stdout.readableEnded || child.stdout.destroyed) resolve();
      else child.stdout.once('close', () => resolve());
    });
    void raceTimeout(drained, EXIT_DRAIN_MS).then(() => {
      this.reportClosed();
      void this.stop(false);
    });
  }

  private onFrame(frame: Buffer): void {
    if (this.failure !== undefined || this.closedReported) return;
    let text: string;
    try {
      text = decoder.decode(frame).trim();
    } catch {
      this.fail('PROTOCOL_ERROR', 'the server wrote invalid UTF-8 to stdout');
      return;
    }
    if (text === '') return;
    // Before any parse: a value this deep overflows the stack of whatever recurses into it
    // (the SDK's JSON.stringify of an unknown response did, and took the daemon with it).
    if (textNestsDeeperThan(frame, this.options.maxFrameNesting)) {
      this.fail('PROTOCOL_ERROR', `the server sent a message nested more than ${this.options.maxFrameNesting} levels deep`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const redacted = this.options.redact?.(text) ?? text;
      this.fail('PROTOCOL_ERROR', `the server wrote something other than JSON-RPC to stdout: ${JSON.stringify(redacted.slice(0, 80))}`);
      return;
    }
    if (!isJsonRpcMessage(parsed)) {
      this.fail('PROTOCOL_ERROR', 'the server wrote a JSON value that is not a JSON-RPC message');
      return;
    }
    // Whatever the SDK's handling of one message throws (it runs in our stdout 'data'
    // handler, where nothing else would catch it) fails this server, never the daemon.
    try {
      this.onmessage?.(parsed);
    } catch (error) {
      const failure = unhandledMessage(error, this.options.redact);
      this.fail(failure.code, failure.message);
    }
  }

  /** A misbehaving server: remember why, stop it, and report the close. */
  private fail(code: ErrorCode, message: string): void {
    if (this.failure !== undefined) return;
    this.failure = { code, message };
    this.child?.stdout.pause();
    void this.stop(true);
  }

  private reportClosed(): void {
    if (this.closedReported) return;
    this.closedReported = true;
    this.launch.sandbox?.onEnd?.();
    this.onclose?.();
  }
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);

function onlyKeys(value: object, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON-RPC envelope the SDK accepts (its four strict message shapes), checked by hand:
 * the SDK checks every message it is given again with its own schemas (and the result with
 * the request's result schema), so a zod parse here too cost each call a second full parse.
 */
export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (!isObject(value) || value.jsonrpc !== '2.0') return false;
  const id = value.id;
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
  if (typeof value.method === 'string') {
    if (value.params !== undefined && !isObject(value.params)) return false;
    return 'id' in value ? validId && onlyKeys(value, REQUEST_KEYS) : onlyKeys(value, NOTIFICATION_KEYS);
  }
  if ('result' in value) return validId && isObject(value.result) && onlyKeys(value, RESULT_KEYS);
  const error = value.error;
  if (!isObject(error) || typeof error.message !== 'string' || typeof error.code !== 'number' || !Number.isSafeInteger(error.code)) return false;
  return (id === undefined || validId) && onlyKeys(value, ERROR_KEYS);
}

function spawnError(error: NodeJS.ErrnoException, command: string): WispError {
  if (error.code === 'ENOENT') return new WispError('COMMAND_NOT_FOUND', `${command} does not exist`);
  if (error.code === 'EACCES') return new WispError('COMMAND_NOT_EXECUTABLE', `${command} is not executable`);
  return new WispError('SPAWN_FAILED', `could not start ${command}: ${error.message}`);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already empty
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** No event says a process group became empty, so poll it, briefly. */
async function waitGroupEmpty(pid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (let wait = 5; groupAlive(pid) && (await groupRunning(pid)) && Date.now() < deadline; wait = Math.min(wait * 2, 100)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

async function waitNamespaceEmpty(ns: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (let wait = 5; (await namespaceRunning(ns)) && Date.now() < deadline; wait = Math.min(wait * 2, 100)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function raceTimeout(promise: Promise<unknown>, ms: number, also?: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, timeout, ...(also !== undefined ? [also] : [])]).then(() => clearTimeout(timer));
}
