import path from 'node:path';
import type { WispClient } from '../../src/control/client.js';
import type { Params, Service, WispEvent } from '../../src/core/index.js';
import { shown, within } from './wait.js';
import { repoRoot } from './wispd.js';

export const scenarioServer = path.join(repoRoot, 'fixtures', 'servers', 'scenario-server.mjs');

/** Registers the scenario fixture server with the given flags. */
export async function registerScenario(
  client: WispClient,
  name: string,
  flags: string[] = [],
  extra: { timeoutMs?: number; cwd?: string; sandbox?: Params<'services.register'>['sandbox'] } = {},
): Promise<Service> {
  const { service } = await client.call('services.register', { name, command: process.execPath, args: [scenarioServer, ...flags], ...extra });
  return service;
}

/** The process of an active local service (never 0 or null: a test must not signal its own group). */
export function pidOf(service: Service): number {
  const c = service.connection;
  if (c.status !== 'active' || c.pid === null) throw new Error(`${service.name} has no process (${c.status})`);
  return c.pid;
}

/** Trusts and activates a service as it currently is; resolves with the resulting service. */
export async function activate(client: WispClient, name: string): Promise<Service> {
  const { service } = await client.call('services.get', { name });
  return (await client.call('services.activate', { id: service.id, configVersion: service.configVersion })).service;
}

/** Collects events on a subscribed client and lets a test wait for one that matches. */
export class EventLog {
  readonly events: WispEvent[] = [];
  private waiters: { match: (e: WispEvent) => boolean; resolve: (e: WispEvent) => void }[] = [];

  private constructor(private readonly client: WispClient) {
    client.onEvent((event) => {
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(event)) return true;
        w.resolve(event);
        return false;
      });
    });
  }

  static async follow(client: WispClient): Promise<EventLog> {
    const log = new EventLog(client);
    await client.call('events.subscribe', {});
    return log;
  }

  /** The first event (already seen or still to come) that matches; fails, naming the match and the last events seen, once the test's time is nearly out. */
  waitFor(match: (e: WispEvent) => boolean): Promise<WispEvent> {
    const seen = this.events.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return this.waiting(match, 'the first');
  }

  /**
   * Resolves once this log holds every event the daemon emitted before now: a call on the
   * same connection, whose answer leaves the daemon after every event queued before it. Call
   * it before next() when the previous step's events may still be on their way (a step that
   * ended on another client's output, not on this log).
   */
  async caughtUp(): Promise<void> {
    await this.client.call('daemon.status');
  }

  /** The next event after now that matches (failing as waitFor does). */
  next(match: (e: WispEvent) => boolean): Promise<WispEvent> {
    return this.waiting(match, 'the next');
  }

  private waiting(match: (e: WispEvent) => boolean, which: string): Promise<WispEvent> {
    const waiter = { match, resolve: (_: WispEvent): void => undefined };
    const found = new Promise<WispEvent>((resolve) => {
      waiter.resolve = resolve;
      this.waiters.push(waiter);
    });
    const what = `${which} event matching ${match.toString().replace(/\s+/g, ' ').slice(0, 200)}`;
    const waited = within(what, found, undefined, () => `${this.events.length} events, the last ${shown(this.events.slice(-3), 600)}`);
    waited.catch(() => {
      this.waiters = this.waiters.filter((w) => w !== waiter);
    });
    return waited;
  }

  /** Every pid any service was spawned with. */
  pids(): number[] {
    return this.events.flatMap((e) => (e.type === 'service.state' && 'pid' in e.connection && e.connection.pid !== null ? [e.connection.pid] : []));
  }
}
