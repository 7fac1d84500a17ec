import { WispError, type GatewayProfile, type Params } from '../../core/index.js';
import { notFound, type StoredProfile } from '../profile-store.js';
import type { DaemonParts, Handlers } from './types.js';

type Names = 'profiles.list' | 'profiles.set' | 'profiles.delete';
type Member = StoredProfile['services'][number];

/**
 * Profiles (profile-store.ts): named sets of services by id, shown by their names now. A
 * service deleted later is listed as dropped and served no more; one registered later under
 * the same name is another service (another id), so a profile never widens by itself.
 */
export function profileHandlers({ profiles, registry, events }: Pick<DaemonParts, 'profiles' | 'registry' | 'events'>): Pick<Handlers, Names> {
  const view = (profile: StoredProfile): GatewayProfile => {
    const byId = new Map(registry.list().map((service) => [service.id, service.name]));
    const services: Member[] = [];
    const dropped: Member[] = [];
    for (const member of profile.services) {
      const name = byId.get(member.id);
      if (name !== undefined) services.push({ id: member.id, name });
      else dropped.push(member);
    }
    return { name: profile.name, description: profile.description, services, dropped };
  };
  /** Each name as a registered service (SERVICE_NOT_FOUND names the first that is not), once each, in the order given. */
  const resolve = (names: readonly string[]): Member[] => {
    const members = new Map<string, Member>();
    for (const name of names) {
      const service = registry.get({ name });
      members.set(service.id, { id: service.id, name: service.name });
    }
    return [...members.values()];
  };
  const changed = (name: string): void => {
    events.emit({ type: 'profile.changed', name });
  };
  return {
    'profiles.list': async () => ({ profiles: (await profiles.list()).map(view).sort((a, b) => a.name.localeCompare(b.name)) }),
    'profiles.set': async (params) => {
      const stored = await profiles.change(params.name, (current) => {
        if (params.create === true) {
          if (current !== undefined) throw new WispError('PROFILE_EXISTS', `a profile named ${params.name} exists already: change it with wispctl mcp profile edit ${params.name}, or remove it first`, { name: params.name });
          if (params.services === undefined || params.add !== undefined || params.remove !== undefined) throw new WispError('INVALID_PARAMS', 'a new profile is given its services (services), not add or remove', { field: 'services' });
          return { name: params.name, description: params.description ?? null, services: resolve(params.services) };
        }
        if (current === undefined) throw notFound(params.name);
        return updated(current, params, resolve, registry.list());
      });
      changed(params.name);
      return view(stored as StoredProfile);
    },
    'profiles.delete': async (params) => {
      let deleted: StoredProfile | undefined;
      await profiles.change(params.name, (current) => {
        if (current === undefined) throw notFound(params.name);
        deleted = current;
        return null;
      });
      changed(params.name);
      return view(deleted as StoredProfile);
    },
  };
}

/** The profile after profiles.set on one there is: services replaced, or added to and removed from; the ones deleted since forgotten. */
function updated(
  current: StoredProfile,
  params: Params<'profiles.set'>,
  resolve: (names: readonly string[]) => Member[],
  registered: readonly { id: string; name: string }[],
): StoredProfile {
  const { services, add, remove, description } = params;
  if (services !== undefined && (add !== undefined || remove !== undefined)) throw new WispError('INVALID_PARAMS', 'give services (the whole new set) or add and remove, not both', { field: 'services' });
  if (services === undefined && add === undefined && remove === undefined && description === undefined) throw new WispError('INVALID_PARAMS', 'nothing to change: give services, add, remove or description');
  const live = new Set(registered.map((service) => service.id));
  // Fresh names for the ones still registered; the deleted ones go now.
  let members = resolve(registered.filter((service) => current.services.some((m) => m.id === service.id)).map((service) => service.name));
  if (services !== undefined) members = resolve(services);
  if (add !== undefined) members = [...members, ...resolve(add).filter((m) => !members.some((k) => k.id === m.id))];
  if (remove !== undefined) {
    for (const name of remove) {
      // A service deleted since is forgotten already: removing it by its old name is fine.
      if (current.services.some((m) => m.name === name && !live.has(m.id))) continue;
      const [service] = resolve([name]);
      if (service === undefined || !members.some((m) => m.id === service.id)) throw new WispError('INVALID_PARAMS', `${name} is not in the profile ${current.name}`, { field: 'remove', name });
      members = members.filter((m) => m.id !== service.id);
    }
  }
  if (members.length === 0) throw new WispError('INVALID_PARAMS', `a profile serves at least one service: remove the profile instead (wispctl mcp profile remove ${current.name})`, { field: 'services' });
  return { name: current.name, description: description === undefined ? current.description : description, services: members };
}
