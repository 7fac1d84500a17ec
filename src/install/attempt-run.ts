import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ATTEMPT_STARTED, WispError, nextAttemptState, type AttemptError, type EndStatus, type InstallAttempt, type Step } from '../core/index.js';
import type { LockProblem } from './lockfile.js';
import { commonFlags, npmEnvironment, runContainedNpm, type ContainNpm, type NpmSandbox } from './npm-runner.js';
import type { InstallPlan } from './plan.js';
import type { Runtime } from './runtime.js';

export type { AttemptRecord } from './attempt-record-schema.js';
import type { AttemptRecord } from './attempt-record-schema.js';
export type RunningRecord = Extract<AttemptRecord, { status: 'running' }>;
export type SucceededRecord = Extract<AttemptRecord, { status: 'succeeded' }>;
export type EndedRecord = Extract<AttemptRecord, { status: EndStatus }>;

const LOG_TAIL_CHARS = 16 * 1024;

/** The record as the protocol shows it (without its schema version). */
export function attemptView(record: AttemptRecord): InstallAttempt {
  const { schemaVersion: _version, ...attempt } = record;
  return attempt;
}

export interface RunContext {
  readonly plan: InstallPlan;
  readonly runtime: Runtime;
  readonly sandbox: NpmSandbox;
  /** Runs npm in the daemon's sandbox (injected: daemon/compose.ts). */
  readonly contain: ContainNpm;
  /** The attempt's own signal: cancelled, the daemon stopping, or its time limit. */
  readonly signal: AbortSignal;
  readonly save: (record: AttemptRecord) => Promise<void>;
  readonly progress: (step: Step, status: 'started' | 'done', pid: number | null) => void;
  readonly at: () => string;
}

/** A new attempt's record: running, before its first step. */
export function startedRecord(plan: InstallPlan, runtime: Runtime, at: string): RunningRecord {
  return {
    schemaVersion: 1,
    digest: plan.digest,
    package: plan.package,
    version: plan.version,
    bin: plan.bin,
    args: [...plan.args],
    registry: plan.registry,
    directory: plan.directory,
    ...ATTEMPT_STARTED,
    startedAt: at,
    installScripts: [],
    lockedPackages: 0,
    runtime: { node: runtime.node, nodeVersion: runtime.nodeVersion, npmVersion: runtime.npmVersion },
    logTail: '',
  };
}

/**
 * One running attempt: its record, saved on every change, and the steps it goes through.
 * Status and step change only through the attempt's transition function.
 */
export class AttemptRun {
  constructor(
    private record: RunningRecord,
    private readonly context: RunContext,
  ) {}

  get current(): RunningRecord {
    return this.record;
  }

  async update(change: Partial<Pick<RunningRecord, 'npmPid' | 'lockedPackages' | 'installScripts'>>): Promise<void> {
    this.record = { ...this.record, ...change };
    await this.context.save(this.record);
  }

  /** Enters the step (saved), runs its work, and reports both ends of it. */
  async step<T>(name: Step, work: () => Promise<T>): Promise<T> {
    const { signal, progress } = this.context;
    signal.throwIfAborted();
    this.record = { ...this.record, ...nextAttemptState(this.record, { type: 'step', step: name }) };
    await this.context.save(this.record);
    progress(name, 'started', null);
    const result = await work();
    signal.throwIfAborted();
    progress(name, 'done', null);
    return result;
  }

  /** Runs npm in the plan's directory (never with a project .npmrc); a non-zero exit is INSTALL_FAILED. */
  async npm(name: Step, args: string[]): Promise<void> {
    const { plan, runtime, sandbox, signal } = this.context;
    await assertNoNpmrc(plan.directory);
    const exit = await runContainedNpm(this.context.contain, runtime, sandbox, [...args, ...commonFlags(sandbox, plan.registry)], plan.registry, {
      cwd: plan.directory,
      env: npmEnvironment(runtime, sandbox),
      signal,
      // The pid is on disk before anyone hears of it, so a daemon killed now still finds it at the next start.
      onSpawn: (pid) => void this.update({ npmPid: pid }).then(() => this.context.progress(name, 'started', pid)),
      onOutput: (chunk) => this.log(chunk),
      // What the sandbox refused npm is the attempt's to show: its log says where npm tried to go.
      onRefused: (message) => this.log(`wisp sandbox: ${message}\n`),
    });
    await this.update({ npmPid: null });
    signal.throwIfAborted();
    if (exit.exitCode !== 0) {
      const log = this.record.logTail;
      throw new WispError('INSTALL_FAILED', `npm ${args[0] ?? ''} failed (exit ${String(exit.exitCode ?? exit.signal)}): ${lastLines(log)}${certificateHint(log, sandbox.caFile)}`);
    }
  }

  private log(chunk: string): void {
    this.record = { ...this.record, logTail: (this.record.logTail + chunk).slice(-LOG_TAIL_CHARS) };
  }

  async succeed(service: { id: string; name: string }): Promise<SucceededRecord> {
    const done = { ...this.record, ...nextAttemptState(this.record, { type: 'succeed', at: this.context.at(), service }) };
    await this.context.save(done);
    return done;
  }

  async end(status: EndStatus, error: WispError): Promise<EndedRecord> {
    const problems = error.details.problems as LockProblem[] | undefined;
    const ended: AttemptError = { code: error.code, message: error.message, ...(problems !== undefined ? { problems } : {}) };
    const done = { ...this.record, ...nextAttemptState(this.record, { type: 'end', status, at: this.context.at(), error: ended }) };
    await this.context.save(done);
    return done;
  }
}

/** npm reads a project .npmrc from the install directory: none may exist there. */
async function assertNoNpmrc(directory: string): Promise<void> {
  if ((await fs.stat(path.join(directory, '.npmrc')).catch(() => undefined)) !== undefined) {
    throw new WispError('INSTALL_REJECTED', `${directory}/.npmrc exists; npm would read it`);
  }
}

/** npm's codes for a certificate it cannot verify: what a TLS-intercepting proxy causes. */
const CERTIFICATE_CODES = /\b(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_UNTRUSTED)\b/;

/** The way out of a certificate failure, which npm's own message does not give (it suggests turning checks off). */
function certificateHint(log: string, caFile: string | null): string {
  const code = CERTIFICATE_CODES.exec(log)?.[1];
  if (code === undefined) return '';
  const given = caFile === null ? 'no CA bundle is set' : `the CA bundle ${caFile} does not vouch for it`;
  return `\nnpm could not verify the registry's certificate (${code}) and ${given}. Behind a TLS-intercepting proxy, give npm the proxy's CA: wispctl install settings --ca-file FILE.`;
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-8).join('\n');
}
