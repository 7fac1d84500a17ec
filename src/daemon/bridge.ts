import type { ApprovalAnnouncement } from '../approvals/index.js';
import type { RegistryChange } from '../mcp/index.js';
import { approvalView } from './views.js';
import type { DaemonParts } from './handlers/types.js';

/**
 * How the areas' announcements reach clients and each other: approvals become events and
 * audit records, registry changes stop services and become events, and a service leaving
 * `active` (or a new tool list) invalidates the approvals bound to it.
 */

export function onApproval(parts: Pick<DaemonParts, 'events' | 'audit' | 'redactor'>, { type, approval }: ApprovalAnnouncement): void {
  parts.events.emit({ type: type === 'requested' ? 'approval.requested' : 'approval.resolved', approval: approvalView(approval) });
  if (type === 'resolved') {
    const state = approval.state;
    void parts.audit.append(parts.redactor.redactValue({
      at: 'at' in state ? state.at : new Date().toISOString(),
      record: 'approval',
      approvalId: approval.id,
      decision: state.status,
      ...('by' in state ? { by: state.by } : {}),
      ...('reason' in state ? { reason: state.reason } : {}),
      serviceId: approval.binding.serviceId,
      service: approval.summary.serviceName,
      tool: approval.summary.toolName,
      argumentsDigest: approval.binding.argumentsDigest,
      client: approval.requester.clientId,
      session: approval.requester.sessionId,
    }));
  }
}

/** A configuration change stops the service at once (its tools vanish before the process does). */
export function onRegistryChange(parts: Pick<DaemonParts, 'events' | 'supervisor' | 'services'>, change: RegistryChange): void {
  const { events, supervisor, services } = parts;
  switch (change.type) {
    case 'registered':
      events.emit({ type: 'service.registered', service: services.view(change.service) });
      return;
    case 'updated':
      supervisor.rename(change.service.id, change.service.name);
      void supervisor.stop(change.service.id, false, `the service ${change.service.name} was edited`);
      events.emit({ type: 'service.updated', service: services.view(change.service) });
      return;
    case 'deleted':
      void supervisor.remove(change.service.id, `the service ${change.service.name} was deleted`);
      events.emit({ type: 'service.deleted', service: change.service });
      return;
  }
}

/** Approvals never outlive what they are bound to: a service that leaves `active` cancels them; a new tool list makes them stale. */
export function invalidateApprovals({ events, approvals }: Pick<DaemonParts, 'events' | 'approvals'>): void {
  events.onEvent((event) => {
    if (event.type === 'service.state' && event.connection.status !== 'active') {
      approvals.cancelWhere(
        (a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id,
        `${event.service.name} is ${event.connection.status}`,
      );
    } else if (event.type === 'service.tools') {
      approvals.staleWhere(
        (a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id && a.binding.toolListVersion !== event.toolListVersion,
        `the tool list of ${event.service.name} changed`,
      );
    }
  });
}
