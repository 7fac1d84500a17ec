import type { WispClient } from '../control/client.js';
import type { Scope } from './catalog.js';

/** Whether a service is served by this gateway now. */
export type InScope = (service: { readonly id: string; readonly name: string }) => boolean;

/**
 * Which services a gateway serves now: those named (--services, --service), those of its
 * profile as the daemon has it now (--profile: read with every catalog read and every
 * resource or prompt request; profile.changed drops the cached catalog, so an edit applies
 * at once), or every one. A profile the daemon no longer has serves nothing: a
 * profile never falls back to every service. Any other failure (PROFILES_UNREADABLE) is the
 * request's.
 */
export async function inScope(client: WispClient, scope: Scope): Promise<InScope> {
  if (scope.profile !== undefined) {
    const { profiles } = await client.call('profiles.list');
    const ids = new Set(profiles.find((profile) => profile.name === scope.profile)?.services.map((service) => service.id));
    return (service) => ids.has(service.id);
  }
  const names = scope.services;
  return names === null ? () => true : (service) => names.has(service.name);
}
