import { promises as fs } from 'node:fs';
import path from 'node:path';
import { WispError } from '../core/index.js';
import { checkDirectory, readSafe } from '../util/index.js';
import { jsonProblem, moveAside, schemaProblem, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { AttemptRun, startedRecord, type AttemptRecord, type SucceededRecord } from './attempt-run.js';
import { checks } from '#generated/install-attempt-check.js';
import { verifyLockfile, type LockProblem } from './lockfile.js';
import { defaultRegistry, prepareSandbox, uncontained, type ContainNpm, type NpmSandbox } from './npm-runner.js';
import { checkPlanInput, makePlan, type InstallPlan, type PlanInput } from './plan.js';
import { findRuntime, type Runtime } from './runtime.js';
import type { InstallSettings } from './settings.js';
import type { InstallEvent } from './events.js';
import { nextAttemptState, type EndStatus } from '../core/index.js';

export { STEPS, type Step } from '../core/index.js';
export type { AttemptRecord } from './attempt-run.js';

const MAX_PLANS = 64;


export interface InstallerOptions {
  readonly installsDir: string;
  readonly sandboxDir: string;
  readonly settings: () => InstallSettings;
  /** Where every npm run is contained (the daemon's sandbox: bubblewrap and an egress proxy granting the registry's host only). */
  readonly contain: ContainNpm;
  /** Registers the installed server (disabled) and returns it; or finds the one already registered for this plan. */
  readonly register: (plan: InstallPlan, command: string, args: string[]) => Promise<{ id: string; name: string }>;
  /** Where progress and ends are announced. */
  readonly publish: (event: InstallEvent) => void;
  readonly now: () => Date;
}

export interface InstallOutcome {
  readonly attempt: AttemptRecord;
  readonly reused: boolean;
}

/**
 * Verified npm installs, one at a time: lock first, verify every locked package, then
 * `npm ci` with scripts off, then register the server DISABLED. Attempts are recorded in
 * the data dir; anything but success is never replayed.
 */
export class Installer {
  private readonly plans = new Map<string, InstallPlan>();
  private readonly running = new Map<string, AbortController>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly validate = checks.attemptRecord;

  constructor(private readonly options: InstallerOptions) {}

  /** Marks attempts a dead daemon left `running` as `interrupted`, and ends any npm they left behind. */
  async load(): Promise<StorageProblem[]> {
    const problems: StorageProblem[] = [];
    for (const record of await this.readAll(problems)) {
      if (record.status !== 'running') continue;
      if (record.npmPid !== null) await killLeftoverNpm(record.npmPid, record.runtime.node);
      const error = { code: 'INTERRUPTED', message: 'the daemon stopped during this install' } as const;
      await this.save({ ...record, ...nextAttemptState(record, { type: 'end', status: 'interrupted', at: this.at(), error }) });
    }
    return problems;
  }

  /** Makes (or repeats) a plan: checks the input, finds the runtime and the registry. Nothing is written. */
  async plan(input: PlanInput, signal: AbortSignal): Promise<{ plan: InstallPlan; runtime: Runtime }> {
    // A bad spec is the user's to fix whatever the runtime: say so before looking for npm.
    checkPlanInput(input);
    const settings = this.options.settings();
    const runtime = await findRuntime(settings.runtimeDirs);
    const registry = settings.registry ?? (await defaultRegistry(this.contain(settings), runtime, await this.sandbox(), signal));
    const plan = makePlan(input, registry, this.options.installsDir);
    this.plans.delete(plan.digest);
    this.plans.set(plan.digest, plan);
    while (this.plans.size > MAX_PLANS) this.plans.delete(this.plans.keys().next().value as string);
    return { plan, runtime };
  }

  getPlan(digest: string): InstallPlan {
    const plan = this.plans.get(digest);
    if (plan === undefined) throw new WispError('PLAN_NOT_FOUND', `no plan ${digest}: make it again (installs.plan)`, { digest });
    return plan;
  }

  /** Refuses early (before an approval is asked for) what can never run: an unfinished attempt, one running now. */
  async preflight(plan: InstallPlan): Promise<void> {
    if (this.running.has(plan.digest)) throw new WispError('INSTALL_RUNNING', `an install of this plan is already running`, { digest: plan.digest });
    await this.refuseUnfinished(plan);
  }

  private async refuseUnfinished(plan: InstallPlan): Promise<void> {
    const record = await this.read(plan.digest);
    if (record !== undefined && record.status !== 'succeeded') throw unfinished(record);
    if (record === undefined && (await exists(plan.directory))) {
      throw new WispError('INSTALL_UNFINISHED', `${plan.directory} exists without a record of a finished install; inspect or remove it`, {
        digest: plan.digest,
        directory: plan.directory,
      });
    }
  }

  /** Runs the plan (after its approval was spent), in the queue. Resolves with the succeeded attempt; anything else throws. */
  install(plan: InstallPlan, signal: AbortSignal): Promise<InstallOutcome> {
    if (this.running.has(plan.digest)) return Promise.reject(new WispError('INSTALL_RUNNING', 'an install of this plan is already running', { digest: plan.digest }));
    const controller = new AbortController();
    this.running.set(plan.digest, controller);
    const run = this.queue.then(async () => {
      try {
        return await this.attempt(plan, AbortSignal.any([signal, controller.signal]));
      } finally {
        this.running.delete(plan.digest);
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  cancel(digest: string): boolean {
    const controller = this.running.get(digest);
    if (controller === undefined) return false;
    controller.abort(new WispError('CANCELLED', 'the install was cancelled'));
    return true;
  }

  async list(): Promise<AttemptRecord[]> {
    return (await this.readAll([])).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  async get(digest: string): Promise<AttemptRecord> {
    const record = await this.read(digest);
    if (record === undefined) throw new WispError('PLAN_NOT_FOUND', `no install attempt ${digest}`, { digest });
    return record;
  }

  /** Removes an attempt that did not succeed: its directory and its record. A succeeded install stays (there is no uninstall). */
  async discard(digest: string): Promise<AttemptRecord> {
    if (this.running.has(digest)) throw new WispError('INSTALL_RUNNING', 'that install is running: cancel it first', { digest });
    const record = await this.get(digest);
    if (record.status === 'succeeded') {
      throw new WispError('INVALID_PARAMS', `${digest} succeeded and may be in use; there is no uninstall in this version (remove ${record.directory} by hand)`, { digest });
    }
    await fs.rm(record.directory, { recursive: true, force: true });
    await fs.rm(this.recordFile(digest), { force: true });
    return record;
  }

  /** Cancels every running install (daemon stop): their records end `cancelled`. */
  async stopAll(): Promise<void> {
    for (const controller of this.running.values()) controller.abort(new WispError('DAEMON_STOPPING', 'the daemon is stopping'));
    await this.queue;
  }

  private async attempt(plan: InstallPlan, signal: AbortSignal): Promise<InstallOutcome> {
    signal.throwIfAborted();
    const settings = this.options.settings();
    const existing = await this.read(plan.digest);
    if (existing?.status === 'succeeded') return this.reuse(plan, existing);
    await this.refuseUnfinished(plan);
    const runtime = await findRuntime(settings.runtimeDirs);
    const sandbox = await this.sandbox();
    const record = startedRecord(plan, runtime, this.at());
    // The record exists before the directory, so a crash at any point is found at the next start.
    await this.save(record);
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    const run = new AttemptRun(record, {
      plan,
      runtime,
      sandbox,
      contain: this.contain(settings),
      signal: AbortSignal.any([signal, timeout]),
      save: (next) => this.save(next),
      progress: (step, status, pid) => this.options.publish({ kind: 'install.progress', plan, step, status, pid }),
      at: () => this.at(),
    });
    try {
      const service = await this.runSteps(plan, run);
      const done = await run.succeed(service);
      this.options.publish({ kind: 'install.finished', attempt: done });
      return { attempt: done, reused: false };
    } catch (caught) {
      const timedOut = timeout.aborted && !signal.aborted;
      const error = timedOut
        ? new WispError('TIMEOUT', `the install took longer than ${settings.timeoutMs} ms and was stopped`)
        : signal.aborted
          ? signal.reason instanceof WispError
            ? signal.reason
            : new WispError('CANCELLED', 'the install was cancelled')
          : caught instanceof WispError
            ? caught
            : new WispError('INSTALL_FAILED', `the install failed: ${(caught as Error).message}`);
      const status: EndStatus = timedOut ? 'timed_out' : signal.aborted ? 'cancelled' : 'failed';
      this.options.publish({ kind: 'install.finished', attempt: await run.end(status, error) });
      throw new WispError(error.code, error.message, { ...error.details, digest: plan.digest, directory: plan.directory, status });
    }
  }

  /** prepare -> lock -> verify -> install -> check_bin -> register; returns the registered service. */
  private async runSteps(plan: InstallPlan, run: AttemptRun): Promise<{ id: string; name: string }> {
    await run.step('prepare', async () => {
      await checkDirectory(plan.directory, { create: true });
      const manifest = { name: `wisp-install-${plan.digest.slice(0, 12)}`, version: '0.0.0', private: true, dependencies: { [plan.package]: plan.version } };
      await writeFileAtomic(path.join(plan.directory, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    });
    await run.step('lock', () => run.npm('lock', ['install', '--package-lock-only']));
    await run.step('verify', async () => {
      const lock: unknown = JSON.parse(await readSafe(path.join(plan.directory, 'package-lock.json')));
      const problems = verifyLockfile(lock, { name: plan.package, version: plan.version }, plan.registry);
      const packages = lockPackages(lock);
      await run.update({ lockedPackages: packages.length, installScripts: packages.filter((p) => p.hasInstallScript).map((p) => p.path) });
      if (problems.length > 0) throw rejected(problems);
    });
    await run.step('install', () => run.npm('install', ['ci']));
    const binPath = await run.step('check_bin', () => checkBin(plan));
    return run.step('register', () => this.options.register(plan, run.current.runtime.node, [binPath, ...plan.args]));
  }

  /** The same plan again: registers from the finished install (or finds its service) without running npm. */
  private async reuse(plan: InstallPlan, record: SucceededRecord): Promise<InstallOutcome> {
    const binPath = await checkBin(plan);
    const service = await this.options.register(plan, record.runtime.node, [binPath, ...plan.args]);
    const updated = { ...record, serviceId: service.id, serviceName: service.name };
    await this.save(updated);
    this.options.publish({ kind: 'install.finished', attempt: updated });
    return { attempt: updated, reused: true };
  }

  /** The daemon's sandbox, unless the user turned it off for installs (`sandbox: false`: explicit, never a fallback). */
  private contain(settings: InstallSettings): ContainNpm {
    return settings.sandbox ? this.options.contain : uncontained;
  }

  private sandbox(): Promise<NpmSandbox> {
    return prepareSandbox(this.options.sandboxDir, this.options.settings().caFile);
  }

  private recordFile(digest: string): string {
    return path.join(this.options.installsDir, `${digest}.json`);
  }

  private async save(record: AttemptRecord): Promise<void> {
    await checkDirectory(this.options.installsDir, { create: true });
    await writeFileAtomic(this.recordFile(record.digest), `${JSON.stringify(record, null, 2)}\n`);
  }

  private async read(digest: string): Promise<AttemptRecord | undefined> {
    if (!/^[0-9a-f]{32}$/.test(digest)) return undefined;
    let text: string;
    try {
      text = await readSafe(this.recordFile(digest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const problem = this.check(digest, text);
    if (typeof problem === 'string') throw new WispError('STORAGE_FAILED', `${this.recordFile(digest)} is not a valid attempt record: ${problem}`);
    return problem;
  }

  /** The record in `text`, checked against the schema and its file name; or why it is not one. */
  private check(digest: string, text: string): AttemptRecord | string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return jsonProblem(error);
    }
    if (!this.validate(parsed)) return schemaProblem(this.validate.errors);
    if (parsed.digest !== digest) return 'its digest is not the one in its file name';
    return parsed;
  }

  /** Every record; a bad one is moved aside intact (`<digest>.json.bad-<time>`) and reported, the others load. */
  private async readAll(problems: StorageProblem[]): Promise<AttemptRecord[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.options.installsDir);
    } catch {
      return [];
    }
    const records: AttemptRecord[] = [];
    for (const name of names) {
      const match = /^([0-9a-f]{32})\.json$/.exec(name);
      if (match?.[1] === undefined) continue;
      const file = this.recordFile(match[1]);
      let checked: AttemptRecord | string;
      try {
        checked = this.check(match[1], await fs.readFile(file, 'utf8'));
      } catch (error) {
        problems.push({ file, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): skipped`, movedTo: null });
        continue;
      }
      if (typeof checked !== 'string') {
        records.push(checked);
        continue;
      }
      try {
        problems.push({ file, problem: `${checked}: moved aside`, movedTo: await moveAside(file, this.options.now()) });
      } catch (error) {
        problems.push({ file, problem: `${checked}: skipped (it could not be moved aside: ${(error as NodeJS.ErrnoException).code ?? String(error)})`, movedTo: null });
      }
    }
    return records;
  }

  private at(): string {
    return this.options.now().toISOString();
  }
}

function unfinished(record: AttemptRecord): WispError {
  return new WispError(
    'INSTALL_UNFINISHED',
    `an earlier install of this plan ended ${record.status}; it is never replayed. Inspect ${record.directory}, discard it (wispctl install discard ${record.digest}), or install by hand and register.`,
    { digest: record.digest, directory: record.directory, status: record.status },
  );
}

function rejected(problems: LockProblem[]): WispError {
  const shown = problems.slice(0, 20).map((p) => `${p.path} ${p.problem}`);
  return new WispError('INSTALL_REJECTED', `the lockfile failed verification; npm ci was not run:\n${shown.join('\n')}`, { problems });
}

async function exists(file: string): Promise<boolean> {
  return (await fs.stat(file).catch(() => undefined)) !== undefined;
}

function lockPackages(lock: unknown): { path: string; hasInstallScript: boolean }[] {
  const packages = (lock as { packages?: Record<string, { hasInstallScript?: unknown }> }).packages ?? {};
  return Object.entries(packages)
    .filter(([key]) => key !== '')
    .map(([key, entry]) => ({ path: key.replace(/^node_modules\//, ''), hasInstallScript: entry.hasInstallScript === true }));
}

const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

/** The bin, resolved: it must exist, be a regular file inside the package, and be JavaScript (by extension, or a node shebang). */
async function checkBin(plan: InstallPlan): Promise<string> {
  const packageDir = path.join(plan.directory, 'node_modules', plan.package);
  const invalid = (message: string): WispError => new WispError('INSTALL_BIN_INVALID', message, { bin: plan.bin });
  let manifest: { name?: unknown; bin?: unknown };
  try {
    manifest = JSON.parse(await fs.readFile(path.join(packageDir, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    throw invalid(`${plan.package} has no readable package.json after the install`);
  }
  const bins: Record<string, unknown> =
    typeof manifest.bin === 'string' ? { [plan.package.split('/').pop() ?? plan.package]: manifest.bin } : typeof manifest.bin === 'object' && manifest.bin !== null ? (manifest.bin as Record<string, unknown>) : {};
  const relative = bins[plan.bin];
  if (typeof relative !== 'string') {
    const names = Object.keys(bins);
    throw invalid(`${plan.package}@${plan.version} has no bin named ${plan.bin}${names.length > 0 ? ` (it has: ${names.join(', ')})` : ' (it declares no bins)'}`);
  }
  const realPackage = await fs.realpath(packageDir);
  let real: string;
  try {
    real = await fs.realpath(path.resolve(packageDir, relative));
  } catch {
    throw invalid(`the bin ${plan.bin} (${relative}) does not exist in the package`);
  }
  if (!real.startsWith(realPackage + path.sep)) throw invalid(`the bin ${plan.bin} points outside the package (${relative})`);
  if (!(await fs.stat(real)).isFile()) throw invalid(`the bin ${plan.bin} is not a file`);
  if (!JS_EXTENSIONS.has(path.extname(real))) {
    const handle = await fs.open(real, 'r');
    const head = Buffer.alloc(128);
    const { bytesRead } = await handle.read(head, 0, head.length, 0).finally(() => void handle.close());
    const firstLine = head.subarray(0, bytesRead).toString('utf8').split('\n')[0] ?? '';
    if (!/^#!.*\bnode\b/.test(firstLine)) throw invalid(`the bin ${plan.bin} is not JavaScript (${relative}: ${JSON.stringify(firstLine.slice(0, 60))})`);
  }
  return real;
}

async function liveState(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== '' && state !== 'Z' && state !== 'X';
}

/**
 * A daemon killed mid-install can leave npm running: end its group, if that pid still is
 * our npm (Linux: its executable is the recorded node, and it leads its own process group;
 * npm rewrites its command line, so that cannot be checked). Elsewhere it is left alone.
 */
async function killLeftoverNpm(pid: number, node: string): Promise<void> {
  try {
    const [exe, expected, stat] = await Promise.all([fs.readlink(`/proc/${pid}/exe`), fs.realpath(node), fs.readFile(`/proc/${pid}/stat`, 'utf8')]);
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    if (exe !== expected || pgrp !== pid) return;
    process.kill(-pid, 'SIGKILL');
    // SIGKILL lands asynchronously: wait (briefly) until the leader is gone or a zombie.
    for (let i = 0; i < 100 && (await liveState(pid)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  } catch {
    // gone, or not ours to judge
  }
}
