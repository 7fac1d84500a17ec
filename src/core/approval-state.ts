import type { ApprovalState } from './wire/shapes.js';
import { assertNever } from './assert-never.js';

/** pending -> approved -> consumed, or denied | cancelled | stale. Only pending and approved are open. The shape is the wire's. */
export type { ApprovalState };


export type ApprovalEvent =
  | { readonly type: 'approve'; readonly by: string }
  | { readonly type: 'deny'; readonly by: string }
  | { readonly type: 'consume' }
  | { readonly type: 'cancel'; readonly reason: string }
  | { readonly type: 'stale'; readonly reason: string };

export class ApprovalTransitionError extends Error {
  constructor(
    readonly state: ApprovalState,
    readonly event: ApprovalEvent,
  ) {
    super(`an approval that is ${state.status} cannot take ${event.type}`);
  }
}

export function isOpen(state: ApprovalState): boolean {
  return state.status === 'pending' || state.status === 'approved';
}

/** The one transition function for approvals. A consumed approval can never be used again. */
export function nextApprovalState(state: ApprovalState, event: ApprovalEvent, at: string): ApprovalState {
  switch (event.type) {
    case 'approve':
      if (state.status === 'pending') return { status: 'approved', by: event.by, at };
      break;
    case 'deny':
      if (state.status === 'pending') return { status: 'denied', by: event.by, at };
      break;
    case 'consume':
      if (state.status === 'approved') return { status: 'consumed', by: state.by, at };
      break;
    case 'cancel':
      if (isOpen(state)) return { status: 'cancelled', reason: event.reason, at };
      break;
    case 'stale':
      if (isOpen(state)) return { status: 'stale', reason: event.reason, at };
      break;
    default:
      return assertNever(event);
  }
  throw new ApprovalTransitionError(state, event);
}
