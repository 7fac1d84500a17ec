import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../../src/util/index.js';

describe('isoTime', () => {
  it('is toISOString, for any sequence of times (repeated milliseconds included)', () => {
    const ms = fc.integer({ min: 0, max: 4_102_444_800_000 });
    fc.assert(
      fc.property(fc.array(fc.oneof(ms, fc.constant(1_700_000_000_000)), { minLength: 1, maxLength: 20 }), (times) => {
        for (const t of times) expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
      }),
    );
  });
});
