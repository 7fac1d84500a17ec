import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { WispError } from '../core/index.js';
import { BwrapInfo, checkDirectory, killPid, writeSafe } from '../util/index.js';
import type { Runtime } from './runtime.js';

/** Where npm may keep things: never the user's own config, cache or home. */
export interface NpmSandbox {
  /** Empty files passed as --userconfig and --globalconfig (npm refuses one file for both). */
  readonly userConfig: string;
  readonly globalConfig: string;
  readonly cache: string;
  readonly home: string;
  /** A CA bundle for networks behind a TLS-intercepting proxy (--cafile), or null. */
  readonly caFile: string | null;
}

export async function prepareSandbox(root: string, caFile: string | null): Promise<NpmSandbox> {
  const sandbox = { userConfig: path.join(root, 'user-npmrc'), globalConfig: path.join(root, 'global-npmrc'), cache: path.join(root, 'cache'), home: path.join(root, 'home'), caFile };
  await checkDirectory(sandbox.cache, { create: true });
  await checkDirectory(sandbox.home, { create: true });
  await writeSafe(sandbox.userConfig, '');
  await writeSafe(sandbox.globalConfig, '');
  return sandbox;
}

/**
 * npm's environment: an allowlist, never the daemon's own (npm honours npm_config_* and
 * NPM_CONFIG_* variables, and the daemon holds the model key). PATH has only node's own
 * directory and the system's, for npm's child processes (none should run: scripts are off).
 */
export function npmEnvironment(runtime: Runtime, sandbox: NpmSandbox): NodeJS.ProcessEnv {
  return {
    PATH: [path.dirname(runtime.node), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: sandbox.home,
    NO_UPDATE_NOTIFIER: '1',
    NO_COLOR: '1',
  };
}

/** The flags every npm run gets: the sandbox, the one registry, no scripts, no git/URL/file/directory packages, fast failure. */
export function commonFlags(sandbox: NpmSandbox, registry: string): string[] {
  return [
    `--userconfig=${sandbox.userConfig}`,
    `--globalconfig=${sandbox.globalConfig}`,
    `--cache=${sandbox.cache}`,
    `--registry=${registry}`,
    '--ignore-scripts',
    '--allow-git=none',
    '--allow-remote=none',
    '--allow-file=none',
    '--allow-directory=none',
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--logs-max=0',
    '--fetch-retries=1',
    '--fetch-retry-mintimeout=1000',
    '--fetch-retry-maxtimeout=5000',
    '--loglevel=warn',
    '--no-progress',
    '--color=false',
    ...(sandbox.caFile !== null ? [`--cafile=${sandbox.caFile}`] : []),
  ];
}

/**
 * What an npm run may see, as the installer asks for it: the daemon (the composition root)
 * injects the sandbox that makes it (install imports only core and util; the bubblewrap
 * launcher and the egress proxy live in mcp/sandbox). Everything else is absent.
 */
export interface NpmContainRequest {
  /** The command line to contain: `node <npm-cli.js> ...` (its runtime is bound read-only). */
  readonly command: string;
  readonly args: readonly string[];
  /** npm's working directory (the install directory, or npm's private home): read-write. */
  readonly cwd: string;
  /** npm's HOME: a private, empty directory. */
  readonly home: string;
  /** Read-write besides the cwd: npm's private cache. */
  readonly write: readonly string[];
  /** Read-only besides the runtime and the system's libraries: npm's empty configs, the CA bundle. */
  readonly read: readonly string[];
  /** The one `host:port` npm may reach (the registry's), or null: no network at all. */
  readonly egress: string | null;
  /** What to add to the command's args to send it through the sandbox's proxy (when `egress` is set). */
  readonly proxyArgs: (proxy: string) => readonly string[];
  /** A connection the sandbox refused (for the attempt's log). */
  readonly onRefused: (message: string) => void;
}

/** One contained run: the command line that runs the request's command inside, and its end. */
export interface NpmContainer {
  readonly command: string;
  readonly args: readonly string[];
  /** The container writes its info (bwrap's JSON with the sandbox init's "child-pid") on fd 3. */
  readonly infoFd?: boolean;
  /** Ends the run's egress proxy; called once npm has exited. */
  close(): Promise<void>;
}

/** Makes the container of one npm run; fails SANDBOX_UNAVAILABLE where no sandbox can be had (never a silent fallback). */
export type ContainNpm = (request: NpmContainRequest) => Promise<NpmContainer>;

/** npm run as it is, as you (install settings `sandbox: false`): what the user chose, said in every front-end. */
export const uncontained: ContainNpm = (request) => Promise.resolve({ command: request.command, args: request.args, close: () => Promise.resolve() });

/**
 * npm's proxy settings for the sandbox's proxy. npm 11 and 12 use `https-proxy || proxy`
 * for every request (npm-registry-fetch); `--noproxy` empty falls back to NO_PROXY, which
 * the bridge sets empty, so even a registry on a loopback address goes through the proxy.
 */
export function npmProxyFlags(proxy: string): string[] {
  return [`--proxy=${proxy}`, `--https-proxy=${proxy}`];
}

/** What an npm run of the installer may see: its cwd, its cache, its empty configs and CA bundle, and the registry's host. */
export function npmContainRequest(runtime: Runtime, sandbox: NpmSandbox, args: readonly string[], cwd: string, registry: string | null, onRefused: (message: string) => void): NpmContainRequest {
  return {
    command: runtime.node,
    args: [runtime.npmCli, ...args],
    cwd,
    home: sandbox.home,
    write: [sandbox.cache],
    read: [sandbox.userConfig, sandbox.globalConfig, ...(sandbox.caFile !== null ? [sandbox.caFile] : [])],
    egress: registry === null ? null : registryEgress(registry),
    proxyArgs: npmProxyFlags,
    onRefused,
  };
}

/** The registry URL's `host:port` (the scheme's port when none is written), as an egress grant. */
export function registryEgress(registry: string): string {
  const url = new URL(registry);
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return `${url.hostname}:${port}`;
}

/** Runs npm (`args` after npm-cli.js) contained: the container ends when npm has. */
export async function runContainedNpm(contain: ContainNpm, runtime: Runtime, sandbox: NpmSandbox, args: readonly string[], registry: string | null, options: RunNpmOptions & { readonly onRefused: (message: string) => void }): Promise<NpmExit> {
  const container = await contain(npmContainRequest(runtime, sandbox, args, options.cwd, registry, options.onRefused));
  try {
    return await runNpm({ command: container.command, args: container.args, infoFd: container.infoFd === true }, options);
  } finally {
    await container.close();
  }
}

/**
 * The pid of a bubblewrap sandbox's init, read from its info on fd 3; undefined once bwrap
 * has ended or closed the fd without one (it failed before making the sandbox), and at the
 * latest after INFO_WAIT_MS (bwrap writes it as soon as it has cloned).
 */
function sandboxInit(child: ChildProcess): Promise<number | undefined> {
  const info = child.stdio[3] as Readable | null | undefined;
  if (info === null || info === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const parsed = new BwrapInfo();
    const timer = setTimeout(() => done(undefined), INFO_WAIT_MS);
    timer.unref();
    function done(pid: number | undefined): void {
      clearTimeout(timer);
      info?.removeAllListeners('data');
      info?.resume();
      resolve(pid);
    }
    info.on('error', () => done(undefined));
    info.on('data', (chunk: Buffer) => {
      const pid = parsed.add(chunk);
      if (pid !== undefined) done(pid);
    });
    info.once('close', () => done(undefined));
    child.once('exit', () => done(undefined));
  });
}

const INFO_WAIT_MS = 5000;

export interface NpmExit {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface RunNpmOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  readonly onSpawn?: (pid: number) => void;
  readonly onOutput?: (chunk: string) => void;
  /** After SIGTERM to the group, how long before SIGKILL. */
  readonly killGraceMs?: number;
}

/**
 * Runs npm (`node <npm-cli.js> ...args`, contained: the sandbox's command line) with no shell, in its own process group. On abort
 * (cancel, timeout) the whole group gets SIGTERM, then SIGKILL; and when npm exits the
 * group is swept with SIGKILL, so nothing it started outlives it.
 */
export function runNpm(launch: { readonly command: string; readonly args: readonly string[]; readonly infoFd?: boolean }, options: RunNpmOptions): Promise<NpmExit> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      reject(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
      return;
    }
    const child = spawn(launch.command, [...launch.args], {
      cwd: options.cwd,
      env: options.env,
      shell: false,
      detached: true,
      stdio: launch.infoFd === true ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    const inner = launch.infoFd === true ? sandboxInit(child) : undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const signalGroup = (sig: NodeJS.Signals): void => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, sig);
      } catch {
        // the group is gone already
      }
    };
    const onAbort = (): void => {
      const end = (init: number | undefined): void => {
        // The sandbox's init first: its death ends everything in the sandbox's pid namespace.
        // bubblewrap's own --die-with-parent does not cover a bwrap killed while it sets the
        // sandbox up (the init, already in a session of its own, was left running), so the
        // group's signal alone could leave npm running, holding the pipes, forever.
        if (init !== undefined) killPid(init);
        signalGroup('SIGTERM');
        killTimer = setTimeout(() => signalGroup('SIGKILL'), options.killGraceMs ?? 1000);
        killTimer.unref();
      };
      if (inner === undefined) end(undefined);
      else void inner.then(end);
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => options.onOutput?.(chunk));
    }
    child.once('error', (error) => {
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('spawn', () => {
      if (pid !== undefined) options.onSpawn?.(pid);
    });
    // npm itself exiting ends the group (nothing it started may outlive it); its output is
    // complete once both pipes close, which the sweep guarantees.
    child.once('exit', () => signalGroup('SIGKILL'));
    child.once('close', (exitCode, signal) => {
      options.signal.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      resolve({ exitCode, signal });
    });
  });
}

/** Asks the npm found which registry it uses with empty configs: npm's own built-in default, never hard-coded here. */
export async function defaultRegistry(contain: ContainNpm, runtime: Runtime, sandbox: NpmSandbox, signal: AbortSignal): Promise<string> {
  let output = '';
  // Contained too, with no network: it reads only npm's built-in default.
  const exit = await runContainedNpm(contain, runtime, sandbox, ['config', 'get', 'registry', `--userconfig=${sandbox.userConfig}`, `--globalconfig=${sandbox.globalConfig}`], null, {
    cwd: sandbox.home,
    env: npmEnvironment(runtime, sandbox),
    signal,
    onOutput: (chunk) => (output += chunk),
    onRefused: () => undefined,
  });
  const url = output.trim().split('\n').pop()?.trim() ?? '';
  if (exit.exitCode !== 0 || !/^https?:\/\//.test(url)) {
    throw new WispError('INSTALL_FAILED', `could not ask npm for its default registry (exit ${String(exit.exitCode)}): ${output.slice(-500)}`);
  }
  return url.endsWith('/') ? url : `${url}/`;
}
