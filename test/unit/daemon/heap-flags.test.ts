import { describe, expect, it } from 'vitest';
import { heapFlags } from '../../../src/daemon/heap-flags.js';

describe('the V8 heap flags wispd sets for itself', () => {
  it('sets all three when the user chose none', () => {
    expect(heapFlags([], undefined)).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50', '--no-parallel-scavenge']);
    expect(heapFlags(['--enable-source-maps'], '--import=/tmp/x.mjs --max-old-space-size=512')).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50', '--no-parallel-scavenge']);
  });

  it('leaves scavenging alone when the user chose how it runs', () => {
    expect(heapFlags(['--parallel-scavenge'], undefined)).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
    expect(heapFlags([], '--no_parallel_scavenge')).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
    expect(heapFlags(['--single-threaded-gc'], undefined)).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
  });

  it('leaves the young generation alone when the user sized it (node flags or NODE_OPTIONS, - or _)', () => {
    expect(heapFlags(['--max-semi-space-size=32'], undefined)).toEqual(['--heap-growing-percent=50', '--no-parallel-scavenge']);
    expect(heapFlags([], ' --min_semi_space_size=4')).toEqual(['--heap-growing-percent=50', '--no-parallel-scavenge']);
    expect(heapFlags(['--semi-space-growth-factor=2'], undefined)).toEqual(['--heap-growing-percent=50', '--no-parallel-scavenge']);
  });

  it('leaves the old generation alone when the user chose how it grows', () => {
    expect(heapFlags([], '--heap-growing-percent=100')).toEqual(['--semi-space-growth-factor=1', '--no-parallel-scavenge']);
    expect(heapFlags(['--optimize_for_size'], undefined)).toEqual(['--semi-space-growth-factor=1', '--no-parallel-scavenge']);
    expect(heapFlags(['--max-heap-size=256'], undefined)).toEqual(['--semi-space-growth-factor=1', '--no-parallel-scavenge']);
    expect(heapFlags(['--max-semi-space-size=8', '--heap-growing-percent=10', '--parallel-scavenge'], undefined)).toEqual([]);
  });
});
