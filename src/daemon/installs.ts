import { LIMITS, WispError } from '../core/index.js';
import type { Approvals, Requester } from '../approvals/index.js';
import { serviceNameFor, type InstallPlan } from '../install/index.js';
import { isIdShaped, nameKey, type ServiceRegistry } from '../mcp/index.js';
import { installTitle, planShown } from './views.js';

/** An installed server is registered DISABLED, once per plan: the same plan again finds its service. */
export async function registerInstalled(registry: ServiceRegistry, plan: InstallPlan, command: string, args: string[]): Promise<{ id: string; name: string }> {
  const existing = registry.list().find((s) => s.origin?.kind === 'install' && s.origin.planDigest === plan.digest);
  if (existing !== undefined) return existing;
  const taken = new Set(registry.list().map((s) => nameKey(s.name)));
  const config = await registry.register({
    name: serviceNameFor(plan.bin, (name) => taken.has(nameKey(name)) || isIdShaped(name)),
    command,
    args,
    cwd: plan.directory,
    origin: { kind: 'install', planDigest: plan.digest, package: plan.package, version: plan.version },
  });
  return config;
}

/** Refused before anything runs: an install whose service could not be registered. */
export function assertRoomFor(registry: ServiceRegistry, plan: InstallPlan): void {
  if (registry.list().some((s) => s.origin?.kind === 'install' && s.origin.planDigest === plan.digest)) return;
  if (registry.count >= LIMITS.maxServices) {
    throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxServices} services may be registered: remove one before installing another`, {
      limit: 'maxServices',
      max: LIMITS.maxServices,
    });
  }
}

/** installs.start: one approval of kind install, bound to the plan digest, spent once. */
export async function approveInstall(approvals: Approvals, plan: InstallPlan, requester: Requester, signal: AbortSignal): Promise<void> {
  const binding = { planDigest: plan.digest };
  const approval = approvals.create(
    requester,
    binding,
    {
      serviceName: 'wisp host',
      toolName: 'install',
      modelName: 'install',
      title: installTitle(plan),
      arguments: planShown(plan),
      annotations: null,
    },
    'install',
  );
  approvals.spend(await approvals.wait(approval.id, signal), binding, `the install of ${plan.package}@${plan.version}`);
}
