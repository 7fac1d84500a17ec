import { approvalView, approvalsPage, clientId } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The approvals a human answers: listed (paged) and responded to. */
export function approvalHandlers({ approvals }: Pick<DaemonParts, 'approvals'>): Pick<Handlers, 'approvals.list' | 'approvals.respond'> {
  return {
    'approvals.list': (params) => approvalsPage(approvals, params),
    'approvals.respond': (params, ctx) => ({
      approval: approvalView(approvals.respond(params.id, params.decision, clientId(ctx.connection))),
    }),
  };
}
