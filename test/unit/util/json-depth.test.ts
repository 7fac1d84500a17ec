import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NestingMeter, nestsDeeperThan, textNestsDeeperThan } from '../../../src/util/index.js';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

describe('textNestsDeeperThan', () => {
  it('measures nesting on the text, brackets inside strings and escapes not counted', () => {
    expect(textNestsDeeperThan(bytes('[[[1]]]'), 2)).toBe(true);
    expect(textNestsDeeperThan(bytes('[[[1]]]'), 3)).toBe(false);
    expect(textNestsDeeperThan(bytes('{"a":"[[[[\\"[[[["}'), 1)).toBe(false);
    expect(textNestsDeeperThan(bytes('{"a":{"b":[]}}'), 2)).toBe(true);
    // As long as its depth allows: `max` brackets in `max` bytes are not deeper than `max`.
    expect(textNestsDeeperThan(bytes('['.repeat(64)), 64)).toBe(false);
    expect(textNestsDeeperThan(bytes('['.repeat(65)), 64)).toBe(true);
    expect(textNestsDeeperThan(bytes(`${'['.repeat(20_000)}${']'.repeat(20_000)}`), 16_384)).toBe(true);
  });

  it('agrees with the depth of the parsed value, for any JSON text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(textNestsDeeperThan(bytes(text), max)).toBe(nestsDeeperThan(value, max));
      }),
    );
  });
});

describe('NestingMeter', () => {
  it('measures text pushed in pieces as the whole, whatever the cut (strings and escapes straddling chunks)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), fc.array(fc.nat(), { maxLength: 6 }), (value, max, cuts) => {
        const text = bytes(JSON.stringify(value));
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const meter = new NestingMeter(max);
        let deep = false;
        let from = 0;
        for (const at of [...points, text.length]) {
          deep = meter.push(text.subarray(from, at)) || deep;
          from = at;
        }
        expect(deep).toBe(nestsDeeperThan(value, max));
      }),
    );
  });

  it('starts over after reset (one SSE event after another)', () => {
    const meter = new NestingMeter(3);
    expect(meter.push(bytes('[[["\\'))).toBe(false);
    meter.reset();
    // Without the reset the open string and escape would hide these brackets, and the three open levels add to them.
    expect(meter.push(bytes('[[[1]]]'))).toBe(false);
    expect(meter.push(bytes('[[[[1]]]]'))).toBe(true);
  });
});
