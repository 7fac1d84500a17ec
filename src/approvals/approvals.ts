import { isoTime, type CallSignal } from '../util/index.js';
import { randomUUID } from 'node:crypto';
import { LIMITS, WispError } from '../core/index.js';
import { isOpen, nextApprovalState, type Approval, type ApprovalKind, type ApprovalSummary, type Binding, type Requester } from '../core/index.js';

/** An approval, its requester, kind, binding and summary: the wire's shapes (core/wire), defined once. */
export type { Approval, ApprovalKind, ApprovalSummary, Binding, Requester };

/** A third-party tool call: service, connection generation, tool-list version, tool, arguments. */
export type ToolCallBinding = {
  readonly serviceId: string;
  readonly generation: number;
  readonly toolListVersion: number;
  readonly toolName: string;
  readonly argumentsDigest: string;
};

/** What the human is shown for a call (kept under its old name: the summary of every kind has this shape). */
export type ToolCallSummary = ApprovalSummary;

/** What the approvals announce (the daemon's bridge turns it into events and audit records). */
export type ApprovalAnnouncement = { readonly kind: 'approval.requested' | 'approval.resolved'; readonly approval: Approval };

function sameBinding(a: Binding, b: Binding): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** Resolved approvals kept for approvals.list, newest last. */
const RESOLVED_HISTORY = 256;

/**
 * Approval requests: created by the call pipeline, answered by any attached client (the
 * first answer wins), consumed at most once by the call they are bound to. An approval
 * never outlives what it was bound to: see cancelWhere and staleWhere.
 */
export class Approvals {
  private readonly open = new Map<string, Approval>();
  private readonly resolved: Approval[] = [];
  private readonly waiters = new Map<string, ((approval: Approval) => void)[]>();
  /** Creation order of every approval still listed (open or in the resolved history), for paging. */
  private readonly positions = new Map<string, number>();
  private created = 0;

  constructor(
    private readonly announce: (announcement: ApprovalAnnouncement) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(requester: Requester, binding: Binding, summary: ToolCallSummary, kind: ApprovalKind = 'tool_call'): Approval {
    // Nothing waits on a human without bound: per asking client, and in total.
    if (this.open.size >= LIMITS.maxOpenApprovals) {
      throw new WispError('LIMIT_EXCEEDED', `${LIMITS.maxOpenApprovals} approvals are already open; answer some first`, { limit: 'maxOpenApprovals', max: LIMITS.maxOpenApprovals });
    }
    let mine = 0;
    for (const open of this.open.values()) if (open.requester.clientId === requester.clientId) mine += 1;
    if (mine >= LIMITS.maxOpenApprovalsPerClient) {
      throw new WispError('LIMIT_EXCEEDED', `${requester.clientId} already has ${mine} open approvals; answer some first`, {
        limit: 'maxOpenApprovalsPerClient',
        max: LIMITS.maxOpenApprovalsPerClient,
      });
    }
    const approval: Approval = {
      id: randomUUID(),
      kind,
      requester,
      binding,
      summary,
      createdAt: isoTime(this.now()),
      state: { status: 'pending' },
    };
    this.open.set(approval.id, approval);
    this.positions.set(approval.id, ++this.created);
    this.announce({ kind: 'approval.requested', approval });
    return approval;
  }

  get(id: string): Approval {
    const found = this.open.get(id) ?? this.resolved.find((a) => a.id === id);
    if (found === undefined) throw new WispError('APPROVAL_NOT_FOUND', `no approval with id ${id}`, { id });
    return found;
  }

  list(which: 'open' | 'all'): Approval[] {
    return which === 'open' ? [...this.open.values()] : [...this.resolved, ...this.open.values()];
  }

  /**
   * For paging: the approvals listed by `which` that were created after `after` (a position
   * from an earlier page; 0 for the first), oldest first, each with its position. A position
   * never changes, so a page never repeats or skips an approval that is still listed.
   */
  listAfter(which: 'open' | 'all', after: number): { approval: Approval; position: number }[] {
    return this.list(which)
      .map((approval) => ({ approval, position: this.positions.get(approval.id) ?? 0 }))
      .filter((entry) => entry.position > after)
      .sort((a, b) => a.position - b.position);
  }

  /** A human's answer. Only a pending approval can be answered; the first answer wins. */
  respond(id: string, decision: 'approve' | 'deny', by: string): Approval {
    const approval = this.get(id);
    if (approval.state.status !== 'pending') {
      throw new WispError('APPROVAL_NOT_PENDING', `approval ${id} is already ${approval.state.status}`, { id, status: approval.state.status });
    }
    return this.apply(approval, decision === 'approve' ? { type: 'approve', by } : { type: 'deny', by });
  }

  /** Resolves once the approval is no longer pending (approved, denied, cancelled or stale). */
  wait(id: string, signal: CallSignal): Promise<Approval> {
    const approval = this.get(id);
    if (approval.state.status !== 'pending') return Promise.resolve(approval);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const current = this.get(id);
        // The abort's own reason when it gives one (the client disconnected, the daemon is stopping, the task was cancelled).
        const reason = signal.reason instanceof WispError ? signal.reason.message : 'the asker went away';
        if (isOpen(current.state)) this.apply(current, { type: 'cancel', reason });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const list = this.waiters.get(id) ?? [];
      list.push((resolved) => {
        signal.removeEventListener('abort', onAbort);
        resolve(resolved);
      });
      this.waiters.set(id, list);
      if (signal.aborted) onAbort();
    });
  }

  /**
   * Spends an approved approval on exactly the binding it was given for. Anything else (not
   * approved, already consumed, other arguments, another connection or tool list) is refused,
   * and a mismatch makes the approval stale so it can never be used.
   */
  consume(id: string, binding: Binding): Approval {
    const approval = this.get(id);
    if (approval.state.status !== 'approved') {
      throw new WispError('APPROVAL_STALE', `approval ${id} is ${approval.state.status}, not approved`, { id, status: approval.state.status });
    }
    if (!sameBinding(approval.binding, binding)) {
      this.apply(approval, { type: 'stale', reason: 'the call no longer matches what was approved' });
      throw new WispError('APPROVAL_STALE', `approval ${id} was given for another call, connection or tool list`, { id });
    }
    return this.apply(approval, { type: 'consume' });
  }

  /**
   * For a caller that waited (`wait`) on its approval: spends it on `binding` if it was
   * approved, else throws what became of it (APPROVAL_DENIED, CANCELLED, APPROVAL_STALE).
   */
  spend(answered: Approval, binding: Binding, what: string): Approval {
    const state = answered.state;
    if (state.status === 'denied') throw new WispError('APPROVAL_DENIED', `${what} was denied`, { approvalId: answered.id });
    if (state.status === 'cancelled') throw new WispError('CANCELLED', `the approval was cancelled: ${state.reason}`, { approvalId: answered.id });
    if (state.status !== 'approved') throw new WispError('APPROVAL_STALE', `the approval is ${state.status}`, { approvalId: answered.id });
    return this.consume(answered.id, binding);
  }

  /** Cancels every open approval that matches (the service stopped, the task was cancelled...). */
  cancelWhere(match: (approval: Approval) => boolean, reason: string): void {
    for (const approval of [...this.open.values()]) if (match(approval)) this.apply(approval, { type: 'cancel', reason });
  }

  /** Makes every open approval that matches stale (its tool list or connection changed). */
  staleWhere(match: (approval: Approval) => boolean, reason: string): void {
    for (const approval of [...this.open.values()]) if (match(approval)) this.apply(approval, { type: 'stale', reason });
  }

  private apply(approval: Approval, event: Parameters<typeof nextApprovalState>[1]): Approval {
    // Field by field: a spread with an extra property is slow on Node 20 (see mcp/tool-calls.ts).
    const next: Approval = {
      id: approval.id,
      kind: approval.kind,
      requester: approval.requester,
      binding: approval.binding,
      summary: approval.summary,
      createdAt: approval.createdAt,
      state: nextApprovalState(approval.state, event, isoTime(this.now())),
    };
    if (isOpen(next.state)) this.open.set(next.id, next);
    else {
      this.open.delete(next.id);
      this.resolved.push(next);
      if (this.resolved.length > RESOLVED_HISTORY) {
        const forgotten = this.resolved.shift();
        if (forgotten !== undefined) this.positions.delete(forgotten.id);
      }
    }
    if (event.type !== 'consume') this.announce({ kind: 'approval.resolved', approval: next });
    if (next.state.status !== 'pending') {
      const waiters = this.waiters.get(next.id) ?? [];
      this.waiters.delete(next.id);
      for (const waiter of waiters) waiter(next);
    }
    return next;
  }
}
