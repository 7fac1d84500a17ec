import { LIMITS, WispError } from '../core/index.js';
import type { Approval, Approvals } from '../approvals/index.js';
import { canonicalHost, formatEgressGrant, type NetworkAnswer } from '../mcp/index.js';
import { allowNet } from './net-grants.js';
import type { DaemonParts } from './handlers/types.js';

/**
 * The `ask` network mode's question (issue 34): a sandboxed service's connection to a host
 * and port no grant covers waits for a network.connect approval, answered by any attached
 * client. Approved, that one connection goes through ("once"); approved with scope
 * `always` (approvals.respond), the host and port are also granted to the service for good,
 * by the same path as `wispctl mcp allow` (a live grant, shown and revocable). Denied,
 * unanswered within LIMITS.networkAskMs, or withdrawn (the connection went, the server
 * stopped): refused, with network.refused as for any refusal.
 */
export async function askNetwork(
  approvals: Approvals,
  service: { readonly id: string; readonly name: string },
  host: string,
  port: number,
  signal: AbortSignal,
  waitMs: number = LIMITS.networkAskMs,
): Promise<NetworkAnswer> {
  const canonical = canonicalHost(host);
  if (canonical.kind === 'invalid') return 'deny';
  const binding = { serviceId: service.id, host: canonical.host, port };
  const where = formatEgressGrant({ host: canonical.host, kind: canonical.kind, port });
  const approval = approvals.create(
    { clientId: `service:${service.name}`, sessionId: null, taskId: null },
    binding,
    {
      serviceName: service.name,
      toolName: 'network.connect',
      modelName: 'network.connect',
      title: `${service.name} wants to connect to ${where}`,
      arguments: { host: canonical.host, port },
      annotations: null,
    },
    'network.connect',
  );
  const waited = AbortSignal.any([signal, AbortSignal.timeout(waitMs)]);
  const answered = await approvals.wait(approval.id, waited);
  if (answered.state.status !== 'approved') return 'deny';
  approvals.consume(answered.id, binding);
  return 'once';
}

/**
 * approvals.respond: `scope` is for network.connect only, and only with approve. Without
 * `always` the answer is synchronous (a handler's answer then goes out in the call's own
 * tick: tool-call approvals keep their timing). With `always`, the approval is answered
 * first (the first answer wins: a later one records nothing), then the grant is recorded;
 * its connection is let through either way.
 */
export function respondApproval(
  parts: Pick<DaemonParts, 'approvals' | 'registry' | 'supervisor' | 'services'>,
  params: { readonly id: string; readonly decision: 'approve' | 'deny'; readonly scope?: 'once' | 'always' | undefined },
  by: string,
): Approval | Promise<Approval> {
  const { approvals } = parts;
  if (params.scope !== undefined) {
    const kind = approvals.get(params.id).kind;
    if (kind !== 'network.connect') throw new WispError('INVALID_PARAMS', `scope is for network.connect approvals; this one is ${kind}`, { field: 'scope' });
    if (params.decision !== 'approve') throw new WispError('INVALID_PARAMS', 'scope goes with approve: a denial is for this connection only', { field: 'scope' });
  }
  const answered = approvals.respond(params.id, params.decision, by);
  return params.scope === 'always' ? grantAlways(parts, answered) : answered;
}

/** Records the live grant an "always" answer gives: the approval's host and port, exactly. */
async function grantAlways(parts: Pick<DaemonParts, 'registry' | 'supervisor' | 'services'>, answered: Approval): Promise<Approval> {
  const { serviceId, host, port } = answered.binding;
  const canonical = canonicalHost(String(host));
  if (canonical.kind === 'invalid' || typeof port !== 'number') return answered;
  const grant = formatEgressGrant({ host: canonical.host, kind: canonical.kind, port });
  try {
    await allowNet(parts, { id: String(serviceId), host: grant });
  } catch (error) {
    if (!(error instanceof WispError)) throw error;
    throw new WispError(error.code, `the connection to ${grant} was let through once, but the grant was not recorded: ${error.message}`, error.details);
  }
  return answered;
}
