import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan, textNestsDeeperThan } from '../../../src/util/index.js';

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
