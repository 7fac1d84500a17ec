import { respondApproval } from '../net-ask.js';
import { approvalView, approvalsPage, clientId } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The approvals a human answers: listed (paged) and responded to. */
export function approvalHandlers(parts: Pick<DaemonParts, 'approvals' | 'registry' | 'supervisor' | 'services'>): Pick<Handlers, 'approvals.list' | 'approvals.respond'> {
  return {
    'approvals.list': (params) => approvalsPage(parts.approvals, params),
    'approvals.respond': (params, ctx) => {
      const answered = respondApproval(parts, params, clientId(ctx.connection));
      return answered instanceof Promise ? answered.then((approval) => ({ approval: approvalView(approval) })) : { approval: approvalView(answered) };
    },
  };
}
