import { WispError, type Service, type ServiceRef } from '../../core/index.js';
import { launchBinding, type SecretEdit, type VariableRef } from '../../secrets/index.js';
import { assertEditable, secretRefs } from '../service-ops.js';
import type { DaemonParts, Handlers } from './types.js';

type Deps = Pick<DaemonParts, 'registry' | 'supervisor' | 'services' | 'secrets' | 'serviceSecrets' | 'keychain'>;

/** The entry services.checkKeychain reads: never written, so the read only proves the keychain answers. */
const KEYCHAIN_PROBE = { owner: 'wisp-probe', name: 'NEVER_SET' } as const;

/** A service's secrets: variables (stdio) and header values (http), and carrying values over to an edited launch. */
export function secretHandlers(parts: Deps): Pick<Handlers, 'services.checkKeychain' | 'services.setEnv' | 'services.setHeaders' | 'services.carryOverEnv'> {
  const { registry, services, secrets, keychain } = parts;
  return {
    'services.checkKeychain': async () => {
      try {
        await keychain.get(KEYCHAIN_PROBE.owner, KEYCHAIN_PROBE.name);
        return { available: true, reason: null };
      } catch (error) {
        if (error instanceof WispError && error.code === 'KEYCHAIN_UNAVAILABLE') return { available: false, reason: typeof error.details.reason === 'string' ? error.details.reason : error.message };
        throw error;
      }
    },
    'services.setEnv': (params) => setSecrets(parts, params, { kind: 'env', mode: params.mode, given: params.variables }),
    'services.setHeaders': (params) => setSecrets(parts, params, { kind: 'headers', mode: params.mode, given: params.headers }),
    'services.carryOverEnv': async (params) => {
      const config = registry.get({ id: params.id, name: params.name });
      if (config.configVersion !== params.configVersion) {
        throw new WispError('APPROVAL_STALE', `${config.name} changed since it was shown (configVersion ${config.configVersion}); show it again`, {
          configVersion: config.configVersion,
        });
      }
      assertEditable(config);
      // A remote service's header values go to its edited URL the same way: only on this yes.
      await secrets.carryOver(config.id, launchBinding(config), secretRefs(config));
      return { service: services.view(config) };
    },
  };
}

/**
 * services.setEnv and services.setHeaders: values first (a keychain failure changes
 * nothing), then the names, then the entries no longer wanted are erased.
 */
async function setSecrets(parts: Deps, ref: ServiceRef, edit: SecretEdit): Promise<{ service: Service }> {
  const { registry, supervisor, services, serviceSecrets } = parts;
  const target = registry.get({ id: ref.id, name: ref.name });
  assertEditable(target);
  serviceSecrets.check(target, edit);
  let gone: VariableRef[] = [];
  const updated = await registry.update({ id: target.id }, async (config) => {
    const written = await serviceSecrets.write(config.id, launchBinding(config), (edit.kind === 'env' ? config.env : config.headers) ?? [], edit);
    gone = written.gone;
    return edit.kind === 'env' ? { env: written.after } : { headers: written.after };
  });
  await serviceSecrets.erase(updated.id, gone);
  await supervisor.stop(updated.id);
  return { service: services.view(updated) };
}
