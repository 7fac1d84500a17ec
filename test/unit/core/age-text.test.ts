import { describe, expect, it } from 'vitest';
import { ageText } from '../../../src/core/index.js';

describe('ageText (the panel\'s SINCE column)', () => {
  const now = Date.parse('2026-12-07T12:00:00.000Z');
  const ago = (ms: number): string => ageText(new Date(now - ms).toISOString(), now);

  it('says how long ago, in the largest whole unit', () => {
    expect(ago(2_000)).toBe('just now');
    expect(ago(40_000)).toBe('40 s ago');
    expect(ago(5 * 60_000 + 59_000)).toBe('5 min ago');
    expect(ago(3 * 3_600_000)).toBe('3 h ago');
    expect(ago(47 * 3_600_000)).toBe('47 h ago');
    expect(ago(9 * 86_400_000)).toBe('9 d ago');
  });

  it('a time ahead of the clock is just now; one that does not parse is shown as it is', () => {
    expect(ago(-60_000)).toBe('just now');
    expect(ageText('not a time', now)).toBe('not a time');
  });
});
