import { attemptView } from '../../install/index.js';
import { approveInstall, assertRoomFor } from '../installs.js';
import { clientId, planView } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

type InstallMethods = 'installs.plan' | 'installs.start' | 'installs.list' | 'installs.get' | 'installs.cancel' | 'installs.discard' | 'installs.getSettings' | 'installs.setSettings';

/** Verified npm installs: plan, approve and run, the attempts, and the install settings. */
export function installHandlers(parts: Pick<DaemonParts, 'installer' | 'registry' | 'approvals' | 'services' | 'installSettings'>): Pick<Handlers, InstallMethods> {
  const { installer, registry, approvals, services, installSettings } = parts;
  return {
    'installs.plan': async (params, ctx) => {
      const { plan, runtime } = await installer.plan({ package: params.package, version: params.version, bin: params.bin, args: params.args ?? [] }, ctx.signal);
      // A plan that cannot succeed is refused before it is shown (a user would otherwise read
      // and approve it for nothing): an unfinished or running attempt of it, no room for its service.
      await installer.preflight(plan);
      assertRoomFor(registry, plan);
      return { plan: planView(plan, runtime) };
    },
    'installs.start': async (params, ctx) => {
      const plan = installer.getPlan(params.planDigest);
      await installer.preflight(plan);
      assertRoomFor(registry, plan);
      await approveInstall(approvals, plan, { clientId: clientId(ctx.connection), sessionId: null, taskId: null }, ctx.signal);
      const outcome = await installer.install(plan, ctx.signal);
      return { attempt: attemptView(outcome.attempt), service: services.view(registry.get({ id: outcome.attempt.serviceId ?? '' })), reused: outcome.reused };
    },
    'installs.list': async () => ({ attempts: (await installer.list()).map(attemptView) }),
    'installs.get': async (params) => ({ attempt: attemptView(await installer.get(params.digest)) }),
    'installs.cancel': (params) => ({ cancelled: installer.cancel(params.digest) }),
    'installs.discard': async (params) => ({ discarded: attemptView(await installer.discard(params.digest)) }),
    'installs.getSettings': () => ({ settings: installSettings.view }),
    'installs.setSettings': async (params) => {
      await installSettings.update(params);
      return { settings: installSettings.view };
    },
  };
}
