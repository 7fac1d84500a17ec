import { describe, expect, it } from 'vitest';
import { heapFlags } from '../../../src/daemon/heap-flags.js';

describe('the V8 heap flags wispd sets for itself', () => {
  it('sets both when the user chose neither', () => {
    expect(heapFlags([], undefined)).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
    expect(heapFlags(['--enable-source-maps'], '--import=/tmp/x.mjs --max-old-space-size=512')).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
  });

  it('leaves the young generation alone when the user sized it (node flags or NODE_OPTIONS, - or _)', () => {
    expect(heapFlags(['--max-semi-space-size=32'], undefined)).toEqual(['--heap-growing-percent=50']);
    expect(heapFlags([], ' --min_semi_space_size=4')).toEqual(['--heap-growing-percent=50']);
    expect(heapFlags(['--semi-space-growth-factor=2'], undefined)).toEqual(['--heap-growing-percent=50']);
  });

  it('leaves the old generation alone when the user chose how it grows', () => {
    expect(heapFlags([], '--heap-growing-percent=100')).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlags(['--optimize_for_size'], undefined)).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlags(['--max-heap-size=256'], undefined)).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlags(['--max-semi-space-size=8', '--heap-growing-percent=10'], undefined)).toEqual([]);
  });
});
