import { isoTime } from '../util/index.js';
import type { EventPayload } from '../core/index.js';
import { assertNever } from '../core/index.js';
import type { ApprovalAnnouncement } from '../approvals/index.js';
import { STEPS, attemptView, type InstallEvent } from '../install/index.js';
import { launchDigest, type ElicitationAnnouncement, type McpEvent, type RegistryChange, type ServerNotice } from '../mcp/index.js';
import type { SessionEvent } from '../sessions/index.js';
import { approvalOutcome, approvalView } from './views.js';
import type { DaemonParts } from './handlers/types.js';

/**
 * The one bridge between the areas and the outside. Areas publish typed domain events (their
 * own vocabulary, carrying domain objects) on one bus; here, and only here, they become wire
 * events for clients, audit records, and the reactions of one area to another (a registry
 * change stops its service; a connection leaving `active` or a new tool list invalidates the
 * approvals bound to it).
 */
export type DomainEvent = McpEvent | SessionEvent | InstallEvent | ApprovalAnnouncement | ElicitationAnnouncement;

type Listener = (event: DomainEvent) => void;

export class DomainBus {
  private readonly listeners: Listener[] = [];

  /** Listeners run in the order they were added, synchronously, for every event. */
  on(listener: Listener): void {
    this.listeners.push(listener);
  }

  readonly publish = (event: DomainEvent): void => {
    for (const listener of this.listeners) listener(event);
  };
}

/** Wires the reactions, in order: effects on other areas first, then the wire event, then what listens to it. */
export function connectBridge(bus: DomainBus, parts: DaemonParts): void {
  bus.on((event) => {
    if (event.kind === 'service.updated' || event.kind === 'service.deleted') registryEffects(parts, event);
  });
  bus.on((event) => parts.events.emit(toWire(parts, event)));
  bus.on((event) => invalidateApprovals(parts, event));
  bus.on((event) => {
    if (event.kind === 'approval.resolved') auditApproval(parts, event);
  });
}

/** The wire event a domain event is shown as. */
export function toWire(parts: Pick<DaemonParts, 'services'>, event: DomainEvent): EventPayload {
  switch (event.kind) {
    case 'service.registered':
    case 'service.updated':
      return { type: event.kind, service: parts.services.view(event.service) };
    case 'service.granted':
      return { type: 'service.updated', service: parts.services.view(event.service) };
    case 'service.deleted':
      return { type: 'service.deleted', service: event.service };
    case 'connection.changed':
      return { type: 'service.state', service: event.service, connection: event.state };
    case 'tools.discovered':
      return { type: 'service.tools', service: event.service, toolListVersion: event.toolListVersion, toolCount: event.toolCount };
    case 'tools.held':
      return { type: 'tools.held', serviceId: event.service.id, serviceName: event.service.name, toolListVersion: event.toolListVersion, added: [...event.added], changed: [...event.changed] };
    case 'tools.accepted':
      return { type: 'tools.accepted', serviceId: event.service.id, serviceName: event.service.name, toolListVersion: event.toolListVersion, accepted: [...event.accepted] };
    case 'call.started':
      return { type: 'tool.call.started', call: event.call };
    case 'call.progress':
      return { type: 'tool.call.progress', call: event.call, progress: event.progress, total: event.total, message: event.message };
    case 'call.finished':
      return { type: 'tool.call.finished', call: event.call, durationMs: event.durationMs, waitedMs: event.waitedMs, truncated: event.truncated };
    case 'call.failed':
      return { type: 'tool.call.failed', call: event.call, code: event.code, message: event.message, durationMs: event.durationMs, waitedMs: event.waitedMs };
    case 'network.refused':
      return { type: 'network.refused', ...event.refusal };
    case 'server.log':
    case 'resource.updated':
    case 'offerings.changed':
      return noticeWire(event);
    case 'approval.requested':
      return { type: event.kind, approval: approvalView(event.approval) };
    case 'approval.resolved':
      return { type: event.kind, approval: approvalOutcome(event.approval) };
    case 'elicitation.requested':
    case 'elicitation.resolved':
      return { type: event.kind, elicitation: event.elicitation };
    case 'session.created':
      return { type: 'session.created', session: event.session };
    case 'session.deleted':
      return { type: 'session.deleted', sessionId: event.sessionId };
    case 'task.changed':
      return { type: 'task.state', sessionId: event.sessionId, task: event.task };
    case 'model.streamed':
      return { type: 'model.delta', sessionId: event.sessionId, taskId: event.taskId, round: event.round, kind: event.part, text: event.text };
    case 'model.turned': {
      const { turn } = event;
      return {
        type: 'model.turn',
        sessionId: event.sessionId,
        taskId: event.taskId,
        round: event.round,
        finishReason: turn.finishReason,
        usage: turn.usage === null ? null : { ...turn.usage },
        toolCalls: turn.toolCalls.map((c) => ({ id: c.id, modelName: c.function.name, arguments: c.function.arguments })),
      };
    }
    case 'install.progress': {
      const { plan } = event;
      return {
        type: 'install.progress',
        install: { digest: plan.digest, package: plan.package, version: plan.version },
        step: event.step,
        index: STEPS.indexOf(event.step) + 1,
        total: STEPS.length,
        status: event.status,
        pid: event.pid,
      };
    }
    case 'install.finished': {
      // The end without its log tail: that is read with installs.get.
      const { logTail: _omitted, ...shown } = attemptView(event.attempt);
      return { type: 'install.finished', attempt: shown };
    }
    default:
      return assertNever(event);
  }
}

/** What a server said of its own accord (mcp/server-notices.ts), as its event. */
function noticeWire(event: ServerNotice): EventPayload {
  switch (event.kind) {
    case 'server.log': {
      const { kind: _kind, ...log } = event;
      return { type: 'service.log', ...log };
    }
    case 'resource.updated':
      return { type: 'service.offerings', service: event.service, changed: 'resource', uri: event.uri };
    case 'offerings.changed':
      return { type: 'service.offerings', service: event.service, changed: event.changed, uri: null };
  }
}

/**
 * A configuration change stops the service at once (its tools vanish before the process does).
 * An edited command, args, cwd or url is a new trust: the tool pins go; a deleted service's too.
 */
function registryEffects({ supervisor, offerPins }: Pick<DaemonParts, 'supervisor' | 'offerPins'>, change: RegistryChange): void {
  if (change.kind === 'service.updated') {
    supervisor.rename(change.service.id, change.service.name);
    const stopped = supervisor.stop(change.service.id, false, `the service ${change.service.name} was edited`);
    void stopped.then(() => supervisor.pins.reset(change.service.id, launchDigest(change.service))).catch(() => undefined);
  } else if (change.kind === 'service.deleted') {
    void supervisor
      .remove(change.service.id, `the service ${change.service.name} was deleted`)
      .then(() => supervisor.pins.remove(change.service.id))
      .then(() => offerPins.remove(change.service.id))
      .catch(() => undefined);
  }
}

/** Approvals never outlive what they are bound to: a service that leaves `active` cancels them; a new tool list makes them stale. */
function invalidateApprovals({ approvals }: Pick<DaemonParts, 'approvals'>, event: DomainEvent): void {
  if (event.kind === 'connection.changed' && event.state.status !== 'active') {
    approvals.cancelWhere((a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id, `${event.service.name} is ${event.state.status}`);
  } else if (event.kind === 'tools.discovered') {
    approvals.staleWhere(
      (a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id && a.binding.toolListVersion !== event.toolListVersion,
      `the tool list of ${event.service.name} changed`,
    );
  }
}

/** Every decision on an approval is on record in the audit log. */
function auditApproval(parts: Pick<DaemonParts, 'audit' | 'redactor'>, { approval }: ApprovalAnnouncement): void {
  const state = approval.state;
  const record: Record<string, unknown> = {
    at: 'at' in state ? state.at : isoTime(new Date()),
    record: 'approval',
    approvalId: approval.id,
    decision: state.status,
  };
  if ('by' in state) record.by = state.by;
  if ('reason' in state) record.reason = state.reason;
  record.serviceId = approval.binding.serviceId;
  record.service = approval.summary.serviceName;
  record.tool = approval.summary.toolName;
  record.argumentsDigest = approval.binding.argumentsDigest;
  record.client = approval.requester.clientId;
  record.session = approval.requester.sessionId;
  void parts.audit.append(record);
}
