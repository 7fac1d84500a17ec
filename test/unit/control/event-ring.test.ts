import { describe, expect, it } from 'vitest';
import { EventRing } from '../../../src/control/event-ring.js';

/** A deterministic generator (mulberry32), so a failing run can be repeated. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An event's JSON of about `size` characters, some of them outside ASCII (2, 3 and 4 UTF-8 bytes). */
function eventText(seq: number, size: number, next: () => number): string {
  const pieces = ['a', 'é', '€', '😀', '"', '\\n'];
  let body = '';
  while (body.length < size) body += pieces[Math.floor(next() * pieces.length)] ?? '';
  return JSON.stringify({ type: 'model.delta', seq, text: body });
}

describe('EventRing', () => {
  it('gives back exactly what was pushed, newest last, through many wraps and growths, within both bounds', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      const maxEvents = 50 + Math.floor(next() * 200);
      const maxBytes = 16 * 1024 + Math.floor(next() * 64 * 1024);
      const ring = new EventRing(maxEvents, maxBytes);
      const pushed: { seq: number; text: string }[] = [];
      let largest = 0;
      let total = 0;
      for (let seq = 1; seq <= 2000; seq++) {
        // Mostly small events, now and then a large one (up to a quarter of the budget).
        const size = next() < 0.05 ? Math.floor(next() * (maxBytes / 8)) : Math.floor(next() * 400);
        const text = eventText(seq, size, next);
        const bytes = Buffer.byteLength(text);
        largest = Math.max(largest, bytes);
        total += bytes;
        ring.push(seq, 'model.delta', text, bytes);
        pushed.push({ seq, text });

        expect(ring.oldestSeq).toBe(seq - ring.length + 1);
        // Everything before the oldest held was dropped, and nothing after it.
        expect(ring.droppedUpTo).toBe(seq - ring.length);
        if (seq % 5 !== 0) continue; // every push is checked above; what is held, every fifth
        const held = ring.after(0);
        // The newest events, in order, each exactly as pushed.
        expect(held.length).toBe(ring.length);
        expect(held.at(-1)?.seq).toBe(seq);
        const expected = pushed.slice(pushed.length - held.length);
        expect(held.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
        expect(held.map((e) => e.text)).toEqual(expected.map((e) => e.text));
        expect(held.every((e) => e.type === 'model.delta' && e.bytes === Buffer.byteLength(e.text))).toBe(true);
        // Within both bounds, and holding a fair share of what the budget allows.
        expect(ring.length).toBeLessThanOrEqual(maxEvents);
        expect(ring.bytes).toBe(held.reduce((sum, e) => sum + e.bytes, 0));
        expect(ring.bytes).toBeLessThanOrEqual(maxBytes);
        const fits = pushed.length <= maxEvents && total <= maxBytes / 2 - 2 * largest;
        if (fits) expect(ring.length).toBe(pushed.length);
        else expect(ring.length === maxEvents || ring.bytes >= maxBytes / 2 - 2 * largest).toBe(true);
      }
      expect(ring.oldestSeq).toBe(ring.after(0)[0]?.seq);
    }
  });

  it('holds exactly the newest maxEvents when the count is the bound', () => {
    const ring = new EventRing(2048, 4 * 1024 * 1024);
    for (let seq = 1; seq <= 10_000; seq++) {
      const text = JSON.stringify({ type: 'approval.requested', seq, pad: 'x'.repeat(560) });
      ring.push(seq, 'approval.requested', text, Buffer.byteLength(text));
    }
    expect(ring.length).toBe(2048);
    expect(ring.oldestSeq).toBe(10_000 - 2047);
    expect(ring.after(9_990).map((e) => e.seq)).toEqual([9_991, 9_992, 9_993, 9_994, 9_995, 9_996, 9_997, 9_998, 9_999, 10_000]);
    expect(JSON.parse(ring.after(9_999)[0]?.text ?? 'null')).toMatchObject({ seq: 10_000 });
  });

  it('holds nothing, not even what came before, when one event is larger than the whole budget', () => {
    const ring = new EventRing(10, 1000);
    ring.push(1, 'a', '"one"', 5);
    ring.push(2, 'b', `"${'x'.repeat(2000)}"`, 2002);
    expect(ring.length).toBe(0);
    expect(ring.oldestSeq).toBeUndefined();
    // Both count as no longer held: a replay after 1 or 0 says events were missed.
    expect(ring.droppedUpTo).toBe(2);
    ring.push(3, 'c', '"three"', 7);
    expect(ring.after(0).map((e) => [e.seq, e.type, e.text])).toEqual([[3, 'c', '"three"']]);
  });
});
