import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseEventMeter } from '../../../src/mcp/sse-meter.js';

const deep = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

/** What the meter says of `text`, pushed in the pieces `cuts` makes (every byte on its own when asked). */
function measure(text: string, options: { maxBytes?: number; maxNesting?: number; cuts?: number[] } = {}): 'size' | 'nesting' | null {
  const meter = new SseEventMeter(options.maxBytes ?? 1_000_000, options.maxNesting ?? 512);
  const bytes = Buffer.from(text, 'utf8');
  const cuts = [...new Set([0, ...(options.cuts ?? []).map((c) => c % (bytes.length + 1)), bytes.length])].sort((a, b) => a - b);
  for (let i = 1; i < cuts.length; i++) {
    const over = meter.push(bytes.subarray(cuts[i - 1], cuts[i]));
    if (over !== null) return over;
  }
  return null;
}

describe('SseEventMeter: the nesting of what can reach JSON.parse, per event', () => {
  it('refuses an event whose data nests too deep, and passes one under the bound', () => {
    expect(measure(`event: message\ndata: ${deep(600)}\n\n`)).toBe('nesting');
    expect(measure(`event: message\ndata: ${deep(500)}\n\n`)).toBeNull();
  });

  it('is not fooled by a comment, an event name, an id or a retry line holding a quote before the data (the bypass of issue 44)', () => {
    for (const before of [': "', ':"', 'event: "', 'id: "x', 'retry: "', ': \\', ': {"a":"']) {
      expect(measure(`${before}\ndata: ${deep(8000)}\n\n`), before).toBe('nesting');
      expect(measure(`${before}\r\ndata: ${deep(8000)}\r\n\r\n`), `${before} (CRLF)`).toBe('nesting');
      expect(measure(`${before}\rdata: ${deep(8000)}\r\r`), `${before} (CR)`).toBe('nesting');
    }
  });

  it('does not let a line lower the count: closers on a line that is not data, or before the data, do not open room', () => {
    expect(measure(`: ${']'.repeat(8000)}\ndata: ${deep(8000)}\n\n`)).toBe('nesting');
    expect(measure(`foo: ${']'.repeat(8000)}\ndata: ${deep(8000)}\n\n`)).toBe('nesting');
    expect(measure(`data: ${']'.repeat(8000)}\ndata: ${deep(8000)}\n\n`)).toBe('nesting');
  });

  it('ends a string at a line end: a quote on one data line cannot hide the next line (a raw newline is no JSON string)', () => {
    expect(measure(`data: "\ndata: ${deep(8000)}\n\n`)).toBe('nesting');
    expect(measure(`data: ["a\\\ndata: ${deep(8000)}\n\n`)).toBe('nesting');
  });

  it('measures the depth of an event over its data lines (they are joined), and starts again at the next event', () => {
    expect(measure(`data: ${'['.repeat(300)}\ndata: ${'['.repeat(300)}\n\n`)).toBe('nesting');
    expect(measure(`data: ${'['.repeat(300)}\n\ndata: ${'['.repeat(300)}\n\n`)).toBeNull();
    expect(measure(`data: ${'['.repeat(300)}\r\n\r\ndata: ${'['.repeat(300)}\r\n\r\n`)).toBeNull();
  });

  it('measures unknown fields and a byte-order mark before "data" whole (the stricter reading), and brackets inside strings not at all', () => {
    expect(measure(`\uFEFFdata: ${deep(600)}\n\n`)).toBe('nesting');
    expect(measure(`\uFEFF\uFEFFdata: ${deep(600)}\n\n`)).toBe('nesting');
    expect(measure(`x: ${deep(600)}\n\n`)).toBe('nesting');
    expect(measure(`${'['.repeat(600)}\n\n`)).toBe('nesting');
    expect(measure(`data: ${JSON.stringify({ text: '['.repeat(5000) })}\n\n`)).toBeNull();
    expect(measure(`event: ${'['.repeat(5000)}\nid: ${'{'.repeat(5000)}\n: ${'['.repeat(5000)}\ndata: 1\n\n`)).toBeNull();
  });

  it('counts the bytes of the event being read, from its first line to the blank line, and starts again after', () => {
    expect(measure(`data: ${'x'.repeat(200)}\n\n`, { maxBytes: 100 })).toBe('size');
    expect(measure(`: ${'x'.repeat(200)}\n\n`, { maxBytes: 100 })).toBe('size');
    expect(measure(`data: ${'x'.repeat(60)}\n\ndata: ${'x'.repeat(60)}\n\n`, { maxBytes: 100 })).toBeNull();
  });

  it('says the same whatever the cut of the stream into chunks', () => {
    const texts = [`: "\ndata: ${deep(700)}\n\n`, `event: message\r\ndata: ${deep(400)}\r\n\r\ndata: ${deep(400)}\r\n\r\n`, `retry: "\r\ndata: {"a":"["}\r\r`, `data\ndata: [\n\n`];
    for (const text of texts) {
      const whole = measure(text);
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          expect(measure(text, { cuts })).toBe(whole);
        }),
      );
      expect(measure(text, { cuts: Array.from({ length: Buffer.byteLength(text) }, (_, i) => i) })).toBe(whole);
    }
  });
});
