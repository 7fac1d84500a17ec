import { WispError, isRemoteTransport, type Params, type Result } from '../core/index.js';
import { formatEgressGrant, parseEgressGrant, type StoredService } from '../mcp/index.js';
import type { DaemonParts } from './handlers/types.js';

/**
 * services.allowNet (`wispctl mcp allow NAME HOST[:PORT] [--revoke]`): a live grant for a
 * service whose network is host grants or `ask` (its egress proxy reads the registry on
 * every connection, so it applies at once); for a service with no network, a profile
 * change (an edit: disabled, trusted again).
 */
export async function allowNet({ registry, supervisor, services }: Pick<DaemonParts, 'registry' | 'supervisor' | 'services'>, params: Params<'services.allowNet'>): Promise<Result<'services.allowNet'>> {
  const parsed = parseEgressGrant(params.host);
  if (!parsed.ok) throw new WispError('INVALID_PARAMS', `host: ${parsed.reason}`, { field: 'host' });
  const grant = formatEgressGrant(parsed.grant);
  const target = registry.get({ id: params.id, name: params.name });
  const profile = grantable(target);
  const net = profile.net;
  const live = target.netGrants ?? [];
  const inProfile = net.mode === 'hosts' || net.mode === 'ask' ? (net.hosts ?? []).includes(grant) : false;
  const answer = (service: StoredService, change: 'live' | 'profile' | 'unchanged'): Result<'services.allowNet'> => ({ service: services.view(service), grant, change });
  if (params.revoke === true) {
    if (live.includes(grant)) return answer(await registry.setNetGrants({ id: target.id }, (current) => (current.netGrants ?? []).filter((g) => g !== grant)), 'live');
    if (inProfile) {
      throw new WispError('INVALID_PARAMS', `${grant} is a grant of ${target.name}'s sandbox profile, not a live one: take it back with wispctl mcp sandbox ${target.name} --revoke-net ${grant} (an edit: it is disabled and must be trusted again)`, { field: 'host' });
    }
    throw new WispError('INVALID_PARAMS', `${grant} is not granted to ${target.name} (its live grants: ${live.length > 0 ? live.join(', ') : 'none'})`, { field: 'host' });
  }
  if (net.mode === 'none') {
    const config = await registry.update({ id: target.id }, { sandbox: { ...profile, net: { mode: 'hosts', hosts: [grant] } } });
    await supervisor.stop(config.id);
    return answer(config, 'profile');
  }
  if (inProfile || live.includes(grant)) return answer(target, 'unchanged');
  return answer(await registry.setNetGrants({ id: target.id }, (current) => [...new Set([...(current.netGrants ?? []), grant])]), 'live');
}

/** The profile of a service a host can be granted to: a sandboxed stdio one whose network is not the host's already. */
function grantable(target: StoredService): NonNullable<StoredService['sandbox']> {
  if (isRemoteTransport(target.transport)) throw new WispError('INVALID_CONFIG', `${target.name} is a remote service: it runs elsewhere, and network grants are for the sandboxed programs the daemon starts`, { field: 'host' });
  const profile = target.sandbox;
  if (profile === undefined || !profile.enabled) {
    throw new WispError('INVALID_CONFIG', `${target.name} is not sandboxed: it reaches every host already. Sandbox it first (wispctl mcp sandbox ${target.name} --on), then grant hosts`, { field: 'host' });
  }
  if (profile.net.mode === 'all') {
    throw new WispError('INVALID_CONFIG', `${target.name}'s network is all: it reaches every host already, unchecked. To let it reach only the hosts you grant: wispctl mcp sandbox ${target.name} --net none, then wispctl mcp allow ${target.name} HOST`, { field: 'host' });
  }
  return profile;
}
