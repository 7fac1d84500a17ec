import { describe, expect, it } from 'vitest';
import { EmittedEvent, EventHub } from '../../../src/control/index.js';
import type { WispEvent } from '../../../src/core/index.js';
import { LIMITS } from '../../../src/core/index.js';

function hub(capacity: number): EventHub {
  return new EventHub(capacity, () => new Date('2026-01-01T00:00:00Z'));
}
const deleted = (name: string) => ({ type: 'service.deleted' as const, service: { id: name, name } });

describe('EventHub', () => {
  it('numbers events from 1 and stamps them', () => {
    const events = hub(10);
    expect(events.emit(deleted('a'))).toEqual({ type: 'service.deleted', service: { id: 'a', name: 'a' }, seq: 1, at: '2026-01-01T00:00:00.000Z' });
    expect(events.emit(deleted('b')).seq).toBe(2);
    expect(events.lastSeq).toBe(2);
  });

  it('delivers events emitted by a listener after the current one, so every listener sees seq order', () => {
    const events = hub(10);
    const first: number[] = [];
    const second: number[] = [];
    events.onEvent((e) => {
      first.push(e.seq);
      if (e.seq === 1) events.emit(deleted('nested'));
    });
    events.onEvent((e) => second.push(e.seq));
    events.emit(deleted('a'));
    expect(first).toEqual([1, 2]);
    expect(second).toEqual([1, 2]);
  });

  it('replays what came after `since`, and nothing without it', () => {
    const events = hub(10);
    for (const n of ['a', 'b', 'c']) events.emit(deleted(n));
    expect(events.replay(undefined, undefined)).toEqual({ events: [], missed: false });
    expect(events.replay(1, events.runId).events.map((e) => e.seq)).toEqual([2, 3]);
    expect(events.replay(3, undefined)).toEqual({ events: [], missed: false });
  });

  it('says when events after `since` are no longer held', () => {
    const events = hub(2);
    for (const n of ['a', 'b', 'c', 'd']) events.emit(deleted(n));
    const replay = events.replay(1, undefined);
    expect(replay.events.map((e) => e.seq)).toEqual([3, 4]);
    expect(replay.missed).toBe(true);
    expect(events.replay(2, undefined).missed).toBe(false);
  });

  it('treats `since` from another run as missed and replays everything held', () => {
    const events = hub(10);
    events.emit(deleted('a'));
    const replay = events.replay(5, 'an-earlier-run');
    expect(replay.events.map((e) => e.seq)).toEqual([1]);
    expect(replay.missed).toBe(true);
  });
});

describe('EventHub bounds (issue 12)', () => {
  const delta = (text: string) => ({ type: 'model.delta' as const, sessionId: 's', taskId: 't', round: 1, kind: 'content' as const, text });

  it('holds events for `since` up to a byte budget as well as a count', () => {
    // As the daemon builds it: the count limit of 2,048 alone would hold every one of these.
    const events = new EventHub(LIMITS.eventHistory);
    const quarterMb = 'x'.repeat(256 * 1024);
    for (let i = 0; i < 200; i++) events.emit(delta(quarterMb));
    const replay = events.replay(0, events.runId);
    const bytes = replay.events.reduce((sum, e) => sum + Buffer.byteLength(e.text), 0);
    expect(bytes).toBeLessThanOrEqual(LIMITS.maxEventHistoryBytes);
    expect(replay.events.length).toBeGreaterThan(0);
    expect(replay.events.length).toBeLessThan(LIMITS.maxEventHistoryBytes / (256 * 1024) + 1);
    expect(replay.events.at(-1)?.seq).toBe(200);
    expect(replay.missed).toBe(true);
    expect(events.held).toEqual({ count: replay.events.length, bytes });
  });

  it('serialises each event once, for every listener and the history, and never holds one that could not be sent', () => {
    let serialisations = 0;
    class Counting extends EventHub {
      protected override encode(event: WispEvent): { event: WispEvent; text: string | undefined } {
        serialisations += 1;
        return super.encode(event);
      }
    }
    const events = new Counting(LIMITS.eventHistory);
    const refused: number[] = [];
    events.onRefused((event) => refused.push(event.seq));
    const heard: EmittedEvent[] = [];
    events.onEvent((_event, emitted) => heard.push(emitted));
    events.onEvent((_event, emitted) => heard.push(emitted));
    events.emit(delta('small'));
    events.emit(delta('y'.repeat(LIMITS.maxControlFrameBytes)));
    events.emit(delta('after'));
    expect(heard.map((h) => h.event.seq)).toEqual([1, 1, 2, 2, 3, 3]);
    expect(JSON.parse(heard[0]?.json?.text ?? 'null')).toMatchObject({ seq: 1, text: 'small' });
    expect(heard[0]?.frame).toBe(`{"jsonrpc":"2.0","method":"event","params":${heard[1]?.json?.text ?? ''}}\n`);
    expect(heard[0]?.frameBytes).toBe(Buffer.byteLength(heard[0]?.frame ?? ''));
    expect(heard[2]?.json).toBeNull();
    expect(heard[2]?.frame).toBeNull();
    expect(events.replay(0, events.runId).events.map((e) => e.seq)).toEqual([1, 3]);
    expect(serialisations).toBe(3);
    expect(refused).toEqual([2]);
  });

  it('serialises an event nobody asked for after the turn it came in, and holds it for replay, in seq order', async () => {
    let serialisations = 0;
    class Counting extends EventHub {
      protected override encode(event: WispEvent): { event: WispEvent; text: string | undefined } {
        serialisations += 1;
        return super.encode(event);
      }
    }
    const events = new Counting(10);
    for (const n of ['a', 'b', 'c']) events.emit(deleted(n));
    expect(serialisations).toBe(0);
    // Two turns of the event loop: the history is filled after the writes of the turn the events came in.
    await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    expect(serialisations).toBe(3);
    events.emit(deleted('d'));
    expect(events.replay(2, events.runId).events.map((e) => JSON.parse(e.text) as { seq: number; service: { name: string } })).toMatchObject([
      { seq: 3, service: { name: 'c' } },
      { seq: 4, service: { name: 'd' } },
    ]);
    expect(serialisations).toBe(4);
  });
});
