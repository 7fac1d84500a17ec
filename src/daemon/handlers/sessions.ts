import { clientId } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

type SessionMethods = 'sessions.create' | 'sessions.list' | 'sessions.get' | 'sessions.delete' | 'sessions.send' | 'sessions.cancel';

/** Model sessions: their transcripts, and the tasks a client starts and cancels. */
export function sessionHandlers({ sessions }: Pick<DaemonParts, 'sessions'>): Pick<Handlers, SessionMethods> {
  return {
    'sessions.create': async (params) => ({ session: await sessions.create(params.title) }),
    'sessions.list': () => ({ sessions: sessions.list() }),
    'sessions.get': (params) => sessions.get(params.id),
    'sessions.delete': async (params) => {
      await sessions.delete(params.id);
      return { deleted: params.id };
    },
    'sessions.send': async (params, ctx) => ({ task: await sessions.send(params.id, params.text, clientId(ctx.connection)) }),
    'sessions.cancel': async (params) => ({ task: await sessions.cancel(params.id) }),
  };
}
