import { describe, expect, it } from 'vitest';
import { PATTERN_WORDS } from '../../../src/core/index.js';
import { methods } from '../../../src/core/wire/index.js';

/** Every `pattern` in a schema, however deep. */
function patternsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (typeof node !== 'object' || node === null) return found;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' && typeof value === 'string') found.add(value);
    else patternsIn(value, found);
  }
  return found;
}

/** Issue 18 bug 10: an INVALID_PARAMS message says in words what a pattern allows. */
describe('the patterns of our params, in words', () => {
  it('every pattern in a method\'s params has its words', () => {
    const patterns = patternsIn(Object.values(methods).map((method) => method.params));
    expect(patterns.size).toBeGreaterThan(5);
    expect([...patterns].filter((pattern) => PATTERN_WORDS[pattern] === undefined)).toEqual([]);
  });
});
