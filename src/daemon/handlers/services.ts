import { WispError, isRemoteTransport } from '../../core/index.js';
import { forgetLogin, launchDigest, type StoredService } from '../../mcp/index.js';
import { assertEditable, assertRemovable, secretRefs } from '../service-ops.js';
import { allowNet } from '../net-grants.js';
import type { DaemonParts, Handlers } from './types.js';

type ServiceMethods =
  | 'services.register'
  | 'services.list'
  | 'services.get'
  | 'services.update'
  | 'services.delete'
  | 'services.activate'
  | 'services.disable'
  | 'services.refreshTools'
  | 'services.logs'
  | 'services.sandboxPlan'
  | 'services.allowNet';

/** The registry and the lifecycle of services: register, show, edit, delete, activate, disable. */
export function serviceHandlers(parts: Pick<DaemonParts, 'registry' | 'supervisor' | 'services' | 'secrets' | 'offerPins'>): Pick<Handlers, ServiceMethods> {
  const { registry, supervisor, services, secrets, offerPins } = parts;
  return {
    'services.register': async (params) => ({ service: services.view(await registry.register(params)) }),
    'services.list': () => ({ services: registry.list().map((config) => services.view(config)) }),
    'services.get': (params) => ({ service: services.view(registry.get(params)) }),
    'services.update': async (params) => {
      const target = registry.get({ id: params.id, name: params.name });
      assertEditable(target);
      if (params.set.url !== undefined && !isRemoteTransport(target.transport)) {
        throw new WispError('INVALID_CONFIG', `${target.name} is a stdio service: it has a command, not a url`, { field: 'url' });
      }
      // A login belongs to its server: a new URL forgets it (after every check, before the write; a keychain refusal changes nothing).
      const forget = async (current: StoredService, next: StoredService): Promise<void> => {
        if (next.url !== current.url) await forgetLogin(current, services.vault(current));
      };
      const config = await registry.update({ id: target.id }, params.set, params.configVersion, forget);
      await supervisor.stop(config.id);
      // Another command, args, cwd or url is a new trust: the tool pins go before the answer (the bridge does it for every edit).
      await supervisor.pins.reset(config.id, launchDigest(config));
      return { service: services.view(config) };
    },
    'services.delete': async (params) => {
      // Checked in the registry's queue, against the service as it is then (a register or edit just before counts).
      // The secrets go first: if the keychain refuses, nothing is deleted.
      const deleted = await registry.delete(params, async (config) => {
        assertRemovable(config);
        await secrets.erase(config.id, secretRefs(config));
        await forgetLogin(config, services.vault(config), true);
      });
      await supervisor.remove(deleted.id);
      await supervisor.pins.remove(deleted.id);
      await offerPins.remove(deleted.id);
      return { deleted };
    },
    'services.activate': async (params, ctx) => {
      const config = registry.get({ id: params.id, name: params.name });
      await services.activate(config, params.configVersion, ctx.signal);
      return { service: services.view(registry.get({ id: config.id })) };
    },
    'services.disable': async (params) => {
      const config = registry.get(params);
      await supervisor.stop(config.id, supervisor.state(config.id).status === 'stopping', `the service ${config.name} was disabled`);
      return { service: services.view(config) };
    },
    'services.refreshTools': async (params) => {
      const config = registry.get(params);
      await supervisor.refresh(config.id, config.name);
      return { service: services.view(config) };
    },
    'services.logs': (params) => supervisor.logs(registry.get(params).id),
    'services.sandboxPlan': (params) => services.sandboxPlan(registry.get(params)),
    'services.allowNet': (params) => allowNet(parts, params),
  };
}
