import { STEPS, WispError, type InstallAttempt, type InstallPlanView, type Requester, type Service } from '../../core/index.js';
import { texts, text, type Params } from './params.js';
import { addStdio } from './services.js';
import { PANEL_CLIENT_ID, hex, now, type DemoWorld } from './world.js';

const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
type Succeeded = Extract<InstallAttempt, { status: 'succeeded' }>;
const RUNTIME = { node: '(demo: no runtime is looked for)', nodeVersion: 'demo', npmVersion: 'demo' };

/** Plans and attempts of the demo: nothing is downloaded, written or run. */
export class DemoInstalls {
  private readonly plans = new Map<string, InstallPlanView>();
  private readonly attempts = new Map<string, InstallAttempt>();

  constructor(private readonly world: DemoWorld) {}

  plan(p: Params): { plan: InstallPlanView } {
    const pkg = text(p, 'package', 214);
    const version = text(p, 'version', 256);
    const bin = text(p, 'bin', 214);
    const args = texts(p, 'args');
    if (!PACKAGE_NAME.test(pkg)) throw new WispError('INVALID_PLAN', `${pkg} is not an npm package name (name or @scope/name)`);
    if (!EXACT_VERSION.test(version)) throw new WispError('INVALID_PLAN', `${version} is not an exact version (like 1.2.3): no ranges or tags`);
    const digest = hex(JSON.stringify([pkg, version, bin, args]));
    const plan: InstallPlanView = {
      digest,
      package: pkg,
      version,
      bin,
      args,
      registry: 'https://registry.npmjs.org/ (demo: never contacted)',
      directory: `(demo: nothing is written) mcp-installs/${digest}`,
      will: ['demo: show the steps of an install, then register the server DISABLED (in memory)'],
      wont: ['download or run anything', 'run install scripts', 'start the server'],
      runtime: RUNTIME,
    };
    if (this.plans.size >= 64) this.plans.delete(this.plans.keys().next().value ?? '');
    this.plans.set(digest, plan);
    return { plan };
  }

  list(): { attempts: InstallAttempt[] } {
    return { attempts: [...this.attempts.values()].reverse() };
  }

  get(p: Params): { attempt: InstallAttempt } {
    const attempt = this.attempts.get(text(p, 'digest', 64));
    if (attempt === undefined) throw new WispError('PLAN_NOT_FOUND', 'no attempt of that plan (demo)');
    return { attempt };
  }

  /** installs.start: an install approval, bound to the plan, then the steps with their progress. */
  async start(p: Params, requester: Requester = { clientId: PANEL_CLIENT_ID, sessionId: null, taskId: null }): Promise<{ attempt: InstallAttempt; service: Service; reused: boolean }> {
    const plan = this.plans.get(text(p, 'planDigest', 64));
    if (plan === undefined) throw new WispError('PLAN_NOT_FOUND', 'no such plan: plan it again (demo)');
    const earlier = this.attempts.get(plan.digest);
    if (earlier?.status === 'running') throw new WispError('INSTALL_RUNNING', `${plan.package}@${plan.version} is being installed`);
    const { answer } = this.world.ask('install', requester, { planDigest: plan.digest }, {
      serviceName: 'wisp host',
      toolName: 'install',
      modelName: 'install',
      title: `Install ${plan.package}@${plan.version} (demo: nothing is downloaded) and register it DISABLED`,
      arguments: { package: plan.package, version: plan.version, bin: plan.bin, args: plan.args, registry: plan.registry, directory: plan.directory },
      annotations: null,
    });
    if (!(await answer)) throw new WispError('APPROVAL_DENIED', 'the install was denied: nothing was installed');
    const service = earlier?.status === 'succeeded' ? this.world.services.get(earlier.serviceId) : undefined;
    if (earlier?.status === 'succeeded' && service !== undefined) {
      this.world.emit({ type: 'install.finished', attempt: this.withoutLog(earlier) });
      return { attempt: earlier, service, reused: true };
    }
    return this.run(plan);
  }

  private async run(plan: InstallPlanView): Promise<{ attempt: InstallAttempt; service: Service; reused: boolean }> {
    const base = { ...plan, startedAt: now(), installScripts: [], lockedPackages: 3, npmPid: null, runtime: RUNTIME, logTail: '' };
    this.attempts.set(plan.digest, { ...base, status: 'running', step: null, endedAt: null, error: null, serviceId: null, serviceName: null });
    const install = { digest: plan.digest, package: plan.package, version: plan.version };
    for (const [i, step] of STEPS.entries()) {
      this.world.emit({ type: 'install.progress', install, step, index: i + 1, total: STEPS.length, status: 'started', pid: null });
      await this.world.later(250);
      this.world.emit({ type: 'install.progress', install, step, index: i + 1, total: STEPS.length, status: 'done', pid: null });
    }
    const name = this.freeName(plan.bin);
    const origin = { kind: 'install' as const, planDigest: plan.digest, package: plan.package, version: plan.version };
    const service = addStdio(this.world, { name, command: `/demo/mcp-installs/${plan.digest}/node_modules/.bin/${plan.bin}`, args: plan.args, cwd: null, origin });
    const attempt: Succeeded = { ...base, status: 'succeeded', step: 'register', endedAt: now(), error: null, serviceId: service.id, serviceName: service.name, logTail: 'demo: npm was not run' };
    this.attempts.set(plan.digest, attempt);
    this.world.emit({ type: 'install.finished', attempt: this.withoutLog(attempt) });
    return { attempt, service, reused: false };
  }

  private freeName(bin: string): string {
    const base = bin.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 56) || 'installed';
    const taken = new Set([...this.world.services.values()].map((s) => s.name));
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base}-${n}`;
    return name;
  }

  private withoutLog(attempt: Succeeded): Omit<Succeeded, 'logTail'> {
    const { logTail: _logTail, ...rest } = attempt;
    return rest;
  }
}
