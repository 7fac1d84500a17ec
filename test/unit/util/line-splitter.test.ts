import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../src/util/index.js';

function split(max: number, chunks: (string | Buffer)[]) {
  const frames: string[] = [];
  const overflows: number[] = [];
  const splitter = new LineSplitter(max, (f) => frames.push(f.toString()), (n) => overflows.push(n));
  for (const c of chunks) splitter.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return { frames, overflows, splitter };
}

describe('LineSplitter', () => {
  it('splits lines across arbitrary chunk boundaries and strips CR', () => {
    expect(split(100, ['ab', 'c\nde', 'f\r\n\n', 'g']).frames).toEqual(['abc', 'def', '']);
  });

  it('accepts a frame of exactly the cap', () => {
    const { frames, overflows } = split(5, ['12345\n']);
    expect(frames).toEqual(['12345']);
    expect(overflows).toEqual([]);
  });

  it('reports a frame one byte over the cap, even without a newline, and then stops', () => {
    const { frames, overflows, splitter } = split(5, ['123', '456', '\nmore\n']);
    expect(frames).toEqual([]);
    expect(overflows).toEqual([6]);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('never holds more than the cap for a peer that sends no newline', () => {
    const { splitter, overflows } = split(1024, Array.from({ length: 100 }, () => 'x'.repeat(100)));
    expect(overflows).toHaveLength(1);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('counts bytes, not characters', () => {
    const { overflows } = split(4, ['ééé\n']); // 6 bytes
    expect(overflows).toEqual([6]);
  });
});
