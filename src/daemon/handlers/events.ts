import { WispError } from '../../core/index.js';
import type { DaemonParts, Handlers } from './types.js';

/** events.subscribe (with replay) and events.unsubscribe. */
export function eventHandlers({ events }: Pick<DaemonParts, 'events'>): Pick<Handlers, 'events.subscribe' | 'events.unsubscribe'> {
  return {
    'events.subscribe': (params, ctx) => {
      const sameRun = params.runId === undefined || params.runId === events.runId;
      if (sameRun && params.since !== undefined && params.since > events.lastSeq) {
        throw new WispError('EVENTS_UNAVAILABLE', `since ${params.since} is ahead of the newest event (${events.lastSeq})`, {
          lastSeq: events.lastSeq,
        });
      }
      // Computed and sent in the same tick as the response, so no event is missed or repeated.
      const replay = events.replay(params.since, params.runId);
      const types = params.types === undefined ? null : new Set<string>(params.types);
      const replayed = types === null ? replay.events : replay.events.filter((event) => types.has(event.type));
      ctx.afterResponse(() => {
        for (const event of replayed) ctx.connection.notifySerialized('event', event.text);
        ctx.connection.eventTypes = types;
        ctx.connection.subscribed = true;
      });
      return { runId: events.runId, lastSeq: events.lastSeq, replayed: replayed.length, missed: replay.missed };
    },
    'events.unsubscribe': (_params, ctx) => {
      ctx.connection.subscribed = false;
      ctx.connection.eventTypes = null;
      return { subscribed: false as const };
    },
  };
}
