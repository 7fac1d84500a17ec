import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LIMITS, WispError } from '../../core/index.js';
import { childEnvironment, resolveCommand } from '../launch.js';
import type { StoredService } from '../service-store.js';
import type { StdioLaunch } from '../stdio-transport.js';
import { bwrapArgs, bwrapFeatures, identityFiles, type BwrapFeatures } from './bwrap.js';
import { sandboxExecArgs, seatbeltProfile } from './macos.js';
import { planLaunch, within, SYSTEM_DIRS, type SandboxPlan, type SandboxProfile } from './profile.js';
import { runtimeNeeds, systemLayout } from './runtime-needs.js';
import { startEgress, type EgressWiring } from './egress-run.js';

/** Where bwrap and prlimit are looked for: fixed directories, never the PATH (as npm is found: install/runtime.ts). */
export const SANDBOX_TOOL_DIRS = ['/usr/bin', '/bin', '/usr/local/bin'] as const;
const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** What the sandbox of this machine is: usable (with what), or why not. */
export type SandboxAvailability =
  | { readonly available: true; readonly kind: 'bwrap'; readonly bwrap: string; readonly features: BwrapFeatures; readonly prlimit: string | null }
  | { readonly available: true; readonly kind: 'sandbox-exec' }
  | { readonly available: false; readonly reason: string };

export interface SandboxHostOptions {
  readonly platform?: NodeJS.Platform;
  /** Where bwrap and prlimit are looked for (default SANDBOX_TOOL_DIRS). */
  readonly toolDirs?: readonly string[];
  /** macOS's launcher (default /usr/bin/sandbox-exec): another file only in tests, which run on Linux. */
  readonly sandboxExec?: string;
  /** The user the sandbox's one-user passwd names (default: the daemon's). */
  readonly user?: { readonly name: string; readonly uid: number; readonly gid: number };
  /** Where host grants and `ask` get their egress proxy (none: such a service gets no network at all). */
  readonly egress?: EgressWiring | undefined;
}

/** A launch worked out: the plan (what the trust prompt shows) and what the sandbox will probably stop. */
export interface LaunchPreview {
  readonly plan: SandboxPlan;
  readonly warnings: readonly string[];
  /** The command as it will run (resolved on the daemon's PATH). */
  readonly command: string;
}

/**
 * The daemon's sandbox: finds bwrap (or sandbox-exec), checks once that it can make a
 * sandbox here (a bwrap that cannot make a user namespace fails on the spot), plans a
 * service's launch, and turns a launch into the sandboxed one. It never installs anything
 * and never falls back: a service that is sandboxed and cannot be fails SANDBOX_UNAVAILABLE.
 */
export class SandboxHost {
  private ready: Promise<SandboxAvailability> | undefined;
  private readonly platform: NodeJS.Platform;

  constructor(private readonly options: SandboxHostOptions = {}) {
    this.platform = options.platform ?? process.platform;
  }

  /** Whether a sandbox can be had here; a success is kept for the daemon's life, a failure asked again next time. */
  availability(): Promise<SandboxAvailability> {
    this.ready ??= this.find().then((found) => {
      if (!found.available) this.ready = undefined;
      return found;
    });
    return this.ready;
  }

  /** The environment a server gets before its own variables: what a preview plans with. */
  childEnvironment(): Record<string, string> {
    return childEnvironment({});
  }

  /** What a sandboxed launch of `config` (as launched: templates filled in) would see, now. */
  async preview(config: StoredService, profile: SandboxProfile, env: Readonly<Record<string, string>>, searchPath: string | undefined): Promise<LaunchPreview> {
    const command = await resolveCommand(config.command, searchPath);
    const home = privateHome(env.HOME);
    const which = (name: string): Promise<string | undefined> => resolveCommand(name, env.PATH ?? searchPath).catch(() => undefined);
    const [{ needs, warnings }, system] = await Promise.all([runtimeNeeds({ command, args: config.args, cwd: config.cwd, home, which }), systemLayout()]);
    const plan = planLaunch(profile, { home, cwd: config.cwd, system, needs, args: config.args });
    return { plan, warnings, command };
  }

  /** The sandboxed form of a launch, or SANDBOX_UNAVAILABLE. */
  async wrap(name: string, config: StoredService, profile: SandboxProfile, launch: StdioLaunch, searchPath: string | undefined): Promise<StdioLaunch> {
    const found = await this.availability();
    if (!found.available) throw unavailable(name, found.reason, this.platform);
    const env = { ...launch.env, HOME: privateHome(launch.env.HOME) };
    const { plan } = await this.preview(config, profile, env, searchPath);
    if (found.kind === 'sandbox-exec') {
      if (plan.network === 'proxy') throw proxyUnsupported(name, 'macOS');
      return this.wrapMacos(plan, launch, env);
    }
    const user = this.options.user ?? currentUser();
    const files = identityFiles(user, plan.home);
    const wiring = this.options.egress;
    const egress = plan.network === 'proxy' && wiring !== undefined ? await startEgress(config, plan, wiring) : undefined;
    const target = { command: launch.command, args: launch.args, prlimit: found.prlimit, maxTasks: LIMITS.maxSandboxTasks, info: true, identity: true, egress: egress?.parts };
    const args = bwrapArgs(plan, target, found.features);
    const onEnd = egress !== undefined ? () => void egress.close() : undefined;
    return { command: found.bwrap, args, cwd: '/', env, sandbox: { infoFd: true, inputs: found.features.bindData ? [files.passwd, files.group] : [], onEnd } };
  }

  /** macOS: a private home and temporary directory of real files (removed when the server ends), and the Seatbelt profile. */
  private async wrapMacos(plan: SandboxPlan, launch: StdioLaunch, env: Record<string, string>): Promise<StdioLaunch> {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'wisp-sandbox-'));
    const dirs = { home: path.join(root, 'home'), tmp: path.join(root, 'tmp') };
    await Promise.all([fs.mkdir(dirs.home, { mode: 0o700 }), fs.mkdir(dirs.tmp, { mode: 0o700 })]);
    const profile = seatbeltProfile(plan, dirs);
    return {
      command: this.options.sandboxExec ?? SANDBOX_EXEC,
      args: sandboxExecArgs(profile, launch.command, launch.args),
      cwd: plan.chdir === plan.home ? dirs.home : plan.chdir,
      env: { ...env, HOME: dirs.home, TMPDIR: dirs.tmp },
      sandbox: { infoFd: false, inputs: [], onEnd: () => void fs.rm(root, { recursive: true, force: true }) },
    };
  }

  private async find(): Promise<SandboxAvailability> {
    if (this.platform === 'darwin') {
      const launcher = this.options.sandboxExec ?? SANDBOX_EXEC;
      if (!(await executable(launcher))) return { available: false, reason: `${launcher} is missing` };
      return { available: true, kind: 'sandbox-exec' };
    }
    if (this.platform !== 'linux') return { available: false, reason: `no sandbox is supported on ${this.platform} (Linux: bubblewrap; macOS: sandbox-exec)` };
    const dirs = this.options.toolDirs ?? SANDBOX_TOOL_DIRS;
    const bwrap = await firstExecutable(dirs, 'bwrap');
    if (bwrap === undefined) return { available: false, reason: `bwrap (bubblewrap) was not found in ${dirs.join(', ')}` };
    const help = await run(bwrap, ['--help']);
    const { features, missing } = bwrapFeatures(`${help.stdout}\n${help.stderr}`);
    if (missing.length > 0) return { available: false, reason: `${bwrap} has no ${missing.join(', ')} (too old: bubblewrap 0.5 or newer is needed)` };
    const prlimit = await firstExecutable(dirs, 'prlimit');
    const inside = prlimit !== undefined && SYSTEM_DIRS.some((dir) => within(prlimit, dir)) ? prlimit : null;
    const probe = await this.probe(bwrap, features);
    if (probe !== undefined) return { available: false, reason: `${bwrap} cannot make a sandbox here: ${probe}` };
    return { available: true, kind: 'bwrap', bwrap, features, prlimit: inside };
  }

  /** One sandbox made and run for real (`true` in it): user namespaces may be disabled, or bwrap broken. */
  private async probe(bwrap: string, features: BwrapFeatures): Promise<string | undefined> {
    const truth = await firstExecutable(['/usr/bin', '/bin'], 'true');
    if (truth === undefined) return 'no /usr/bin/true to try it with';
    const home = privateHome(os.homedir());
    const plan = planLaunch({ enabled: true, read: [], write: [], net: { mode: 'none' } }, { home, cwd: null, system: await systemLayout(), needs: [], args: [] });
    const args = bwrapArgs(plan, { command: truth, args: [], prlimit: null, maxTasks: LIMITS.maxSandboxTasks, info: false, identity: false }, features);
    const result = await run(bwrap, args);
    if (result.code === 0) return undefined;
    return (result.stderr.trim().split('\n')[0] ?? '').slice(0, 300) || `exit status ${String(result.code)}`;
  }
}

/** The private home's path: the HOME the server is given, unless that is no place for one. */
export function privateHome(home: string | undefined): string {
  if (home === undefined || !path.isAbsolute(home) || path.normalize(home) === '/' || SYSTEM_DIRS.some((dir) => within(path.normalize(home), dir))) return '/home/sandbox';
  return path.normalize(home);
}

/** How to get the sandbox, by OS: what the refusal tells the user to do first. */
function howToGet(platform: NodeJS.Platform): string {
  if (platform === 'linux') return 'Install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap) and allow unprivileged user namespaces';
  if (platform === 'darwin') return 'sandbox-exec comes with macOS (/usr/bin/sandbox-exec): restore it';
  return `Wisp has no sandbox for ${platform}`;
}

function unavailable(name: string, reason: string, platform: NodeJS.Platform): WispError {
  return new WispError(
    'SANDBOX_UNAVAILABLE',
    `${name} is sandboxed, and the sandbox cannot be had here: ${reason}. Nothing ran. ${howToGet(platform)}, or run it unsandboxed with: wispctl mcp sandbox ${name} --off (it then gets every file and the network you have)`,
    { reason },
  );
}

/** Host grants and `ask` go through the egress proxy, which only the Linux sandbox can bridge into (macOS: docs/security.md). */
function proxyUnsupported(name: string, where: string): WispError {
  return new WispError(
    'NETWORK_GRANTS_UNSUPPORTED',
    `${name} is granted network hosts (or asks for them), and network grants work only in the Linux sandbox for now, not on ${where}. Nothing ran. Give it no network (wispctl mcp sandbox ${name} --net none) or, knowing it can then reach any host, all of it (--net all)`,
    { platform: where },
  );
}

function currentUser(): { name: string; uid: number; gid: number } {
  const info = os.userInfo();
  return { name: info.username, uid: info.uid, gid: info.gid };
}

async function executable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function firstExecutable(dirs: readonly string[], name: string): Promise<string | undefined> {
  for (const dir of dirs) if (await executable(path.join(dir, name))) return path.join(dir, name);
  return undefined;
}

function run(file: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { env: childEnvironment({}), timeout: 10_000, shell: false }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null;
      resolve({ code, stdout, stderr });
    });
  });
}
