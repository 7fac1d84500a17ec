import { createHash, randomUUID } from 'node:crypto';
import { WispError, type Approval, type ApprovalKind, type ApprovalSummary, type Binding, type EventPayload, type Requester, type Service, type ToolInfo, type WispEvent } from '../../core/index.js';

/** The demo's one client: the panel itself (installs it starts are asked of it). */
export const PANEL_CLIENT_ID = 'demo-panel';
/** Who asks in the demo's chat: the scripted model. */
export const MODEL_CLIENT_ID = 'demo-model';

/** How many approvals, answered or not, the demo keeps (it is memory only, and long-lived). */
const KEEP_APPROVALS = 200;

export function now(): string {
  return new Date().toISOString();
}

export function hex(text: string, length = 32): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

interface OpenApproval {
  approval: Approval;
  answered: (approved: boolean) => void;
}

/**
 * The demo's in-memory state: services and their tools, approvals, the event sequence.
 * Nothing here starts a process, opens a file or touches the keychain; it all goes when the
 * panel stops.
 */
export class DemoWorld {
  readonly runId = randomUUID();
  readonly startedAt = now();
  readonly services = new Map<string, Service>();
  readonly tools = new Map<string, ToolInfo[]>();
  readonly approvals = new Map<string, OpenApproval>();
  private seq = 0;
  private readonly listeners = new Set<(event: WispEvent) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  get lastSeq(): number {
    return this.seq;
  }

  onEvent(listener: (event: WispEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(payload: EventPayload): void {
    if (this.closed) return;
    const event: WispEvent = { ...payload, seq: ++this.seq, at: now() };
    for (const listener of this.listeners) listener(event);
  }

  /** A pause, so the demo moves at a pace a person can follow; never resolves once closed. */
  later(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const open of this.approvals.values()) if (open.approval.state.status === 'pending') open.answered(false);
  }

  service(ref: { id?: unknown; name?: unknown }): Service {
    const found = [...this.services.values()].find((s) => s.id === ref.id || (ref.id === undefined && s.name === ref.name));
    if (found === undefined) throw new WispError('SERVICE_NOT_FOUND', `no service ${String(ref.id ?? ref.name)} (demo)`);
    return found;
  }

  /** Replaces a service's record; `registered` announces a new one. */
  put(service: Service, how: 'registered' | 'updated' | 'state'): Service {
    this.services.set(service.id, service);
    if (how === 'state') this.emit({ type: 'service.state', service: { id: service.id, name: service.name }, connection: service.connection });
    else this.emit({ type: how === 'registered' ? 'service.registered' : 'service.updated', service });
    return service;
  }

  /** Asks the human (any page); resolves true on approve, false on deny or when the demo ends. */
  ask(kind: ApprovalKind, requester: Requester, binding: Binding, summary: ApprovalSummary): { approval: Approval; answer: Promise<boolean> } {
    const approval: Approval = { id: randomUUID(), kind, requester, binding, summary, createdAt: now(), state: { status: 'pending' } };
    let answered: (approved: boolean) => void = () => undefined;
    const answer = new Promise<boolean>((resolve) => (answered = resolve));
    this.approvals.set(approval.id, { approval, answered });
    this.forgetOld();
    this.emit({ type: 'approval.requested', approval });
    return { approval, answer };
  }

  respond(id: string, decision: 'approve' | 'deny', by: string): Approval {
    const open = this.approvals.get(id);
    if (open === undefined) throw new WispError('APPROVAL_NOT_FOUND', `no approval ${id} (demo)`);
    if (open.approval.state.status !== 'pending') throw new WispError('APPROVAL_NOT_PENDING', `approval ${id} was answered already (${open.approval.state.status})`);
    return this.resolve(open, decision === 'approve' ? { status: 'approved', by, at: now() } : { status: 'denied', by, at: now() });
  }

  /** Ends a pending approval without an answer (its task was cancelled). */
  cancel(id: string, reason: string): void {
    const open = this.approvals.get(id);
    if (open !== undefined && open.approval.state.status === 'pending') this.resolve(open, { status: 'cancelled', reason, at: now() });
  }

  private resolve(open: OpenApproval, state: Approval['state']): Approval {
    open.approval = { ...open.approval, state };
    const { summary: _summary, ...outcome } = open.approval;
    this.emit({ type: 'approval.resolved', approval: outcome });
    open.answered(state.status === 'approved');
    return open.approval;
  }

  private forgetOld(): void {
    const resolved = [...this.approvals.values()].filter((open) => open.approval.state.status !== 'pending');
    for (const open of resolved.slice(0, Math.max(0, this.approvals.size - KEEP_APPROVALS))) this.approvals.delete(open.approval.id);
  }
}
