import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispEvent } from '../../src/core/index.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import type { WispClient } from '../../src/control/client.js';

let daemon: RunningDaemon;
const home = tempDir();
beforeAll(async () => {
  daemon = await startWispd(home.path);
});
afterAll(() => {
  killLeftovers();
  home.remove();
});

function collect(client: WispClient): { events: WispEvent[]; until: (n: number) => Promise<WispEvent[]> } {
  const events: WispEvent[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  client.onEvent((event) => {
    events.push(event);
    for (const w of [...waiters]) if (events.length >= w.n) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return {
    events,
    until: async (n) => {
      if (events.length < n) await new Promise<void>((resolve) => waiters.push({ n, resolve }));
      return events;
    },
  };
}

describe('events.subscribe', () => {
  it('with `types`, sends (and replays) only those event types; an unknown type is refused', async () => {
    const writer = await daemon.connect();
    const all = await daemon.connect();
    const some = await daemon.connect();
    const everything = collect(all);
    const onlyDeleted = collect(some);
    const start = await all.call('events.subscribe', {});
    await writer.call('services.register', { name: 'typed', command: '/bin/true' });
    await writer.call('services.update', { name: 'typed', set: { args: ['x'] } });
    // Subscribing late, from before the register: the replay is filtered too.
    expect(await some.call('events.subscribe', { since: start.lastSeq, runId: start.runId, types: ['service.deleted', 'service.updated'] })).toMatchObject({ replayed: 1 });
    await writer.call('services.delete', { name: 'typed' });
    await writer.call('services.register', { name: 'typed2', command: '/bin/true' });
    // The unfiltered subscriber has seen all four, so the filtered one has had every chance to see them too.
    expect((await everything.until(4)).map((e) => e.type)).toEqual(['service.registered', 'service.updated', 'service.deleted', 'service.registered']);
    await writer.call('services.delete', { name: 'typed2' });
    expect((await onlyDeleted.until(3)).map((e) => e.type)).toEqual(['service.updated', 'service.deleted', 'service.deleted']);
    await expect(some.call('events.subscribe', { types: ['service.exploded'] as never })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await Promise.all([writer.close(), all.close(), some.close()]);
  });

  it('resumes after a reconnect from `since`, with nothing missed or repeated', async () => {
    const writer = await daemon.connect();
    const first = await daemon.connect();
    const seen = collect(first);
    const sub = await first.call('events.subscribe', {});
    await writer.call('services.register', { name: 'e1', command: '/bin/true' });
    const [one] = await seen.until(1);
    await first.close();

    // While the reader is away, two more changes happen.
    await writer.call('services.update', { name: 'e1', set: { args: ['x'] } });
    await writer.call('services.delete', { name: 'e1' });

    const again = await daemon.connect();
    const resumed = collect(again);
    const result = await again.call('events.subscribe', { since: one?.seq ?? 0, runId: sub.runId });
    expect(result).toMatchObject({ runId: sub.runId, replayed: 2, missed: false, lastSeq: (one?.seq ?? 0) + 2 });
    const replayed = await resumed.until(2);
    expect(replayed.map((e) => [e.seq, e.type])).toEqual([
      [(one?.seq ?? 0) + 1, 'service.updated'],
      [(one?.seq ?? 0) + 2, 'service.deleted'],
    ]);
    // Live events follow the replay.
    await writer.call('services.register', { name: 'e2', command: '/bin/true' });
    expect((await resumed.until(3)).map((e) => e.seq)).toEqual([(one?.seq ?? 0) + 1, (one?.seq ?? 0) + 2, (one?.seq ?? 0) + 3]);
    await writer.call('services.delete', { name: 'e2' });
    await again.close();
    await writer.close();
  });

  it('refuses a `since` ahead of the newest event', async () => {
    const client = await daemon.connect();
    const status = await client.call('daemon.status');
    await expect(client.call('events.subscribe', { since: status.lastSeq + 10 })).rejects.toMatchObject({ code: 'EVENTS_UNAVAILABLE' });
    await client.close();
  });

  it('says events were missed when `since` belongs to an earlier run', async () => {
    const client = await daemon.connect();
    const result = await client.call('events.subscribe', { since: 1, runId: 'some-earlier-run' });
    expect(result.missed).toBe(true);
    await client.close();
  });

  it('stops sending after events.unsubscribe', async () => {
    const client = await daemon.connect();
    const seen = collect(client);
    await client.call('events.subscribe', {});
    await client.call('events.unsubscribe');
    await client.call('services.register', { name: 'quiet', command: '/bin/true' });
    await client.call('services.delete', { name: 'quiet' });
    // A status round trip after the writes: any event would have arrived before its answer.
    await client.call('daemon.status');
    expect(seen.events).toEqual([]);
    await client.close();
  });

  it('tells subscribers the daemon is stopping, then closes', async () => {
    const client = await daemon.connect();
    const seen = collect(client);
    await client.call('events.subscribe', {});
    const closed = new Promise<void>((resolve) => client.onClose(() => resolve()));
    await (await daemon.connect()).call('daemon.shutdown');
    await closed;
    expect(seen.events.map((e) => e.type)).toEqual(['daemon.stopping']);
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  });
});
