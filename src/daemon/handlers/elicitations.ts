import { clientId } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** Servers asking the user for input: listed and answered by any attached (human-facing) client; no model has these methods. */
export function elicitationHandlers({ elicitations }: Pick<DaemonParts, 'elicitations'>): Pick<Handlers, 'elicitations.list' | 'elicitations.respond'> {
  return {
    'elicitations.list': () => ({ elicitations: elicitations.list() }),
    'elicitations.respond': (params, ctx) => ({
      elicitation: elicitations.respond(params.id, params.action, params.content, clientId(ctx.connection)),
    }),
  };
}
