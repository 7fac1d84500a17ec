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

describe('LineSplitter with a shared budget', () => {
  /** A budget of `max` bytes shared by every splitter given it, counting what it holds. */
  function budget(max: number) {
    const state = { held: 0 };
    return {
      state,
      take: (bytes: number) => {
        if (state.held + bytes > max) return false;
        state.held += bytes;
        return true;
      },
      give: (bytes: number) => {
        state.held -= bytes;
      },
    };
  }

  it('counts what its unfinished frame holds, and gives it back when the frame ends', () => {
    const shared = budget(100);
    const frames: string[] = [];
    const splitter = new LineSplitter(1000, (f) => frames.push(f.toString()), () => undefined, shared);
    splitter.push(Buffer.from('abc'));
    splitter.push(Buffer.from('def'));
    expect(shared.state.held).toBe(6);
    splitter.push(Buffer.from('g\nhi'));
    expect(frames).toEqual(['abcdefg']);
    expect(shared.state.held).toBe(2);
    splitter.push(Buffer.from('\n'));
    expect(shared.state.held).toBe(0);
  });

  it('stops with reason budget when a piece would pass the shared budget, another splitter holding the rest', () => {
    const shared = budget(10);
    const first = new LineSplitter(1000, () => undefined, () => undefined, shared);
    const overflows: [number, string][] = [];
    const second = new LineSplitter(1000, () => undefined, (n, reason) => overflows.push([n, reason]), shared);
    first.push(Buffer.from('1234567'));
    second.push(Buffer.from('12'));
    second.push(Buffer.from('34'));
    expect(overflows).toEqual([[4, 'budget']]);
    expect(second.pendingBytes).toBe(0);
    expect(shared.state.held).toBe(7);
    // Stopped: it takes nothing more.
    second.push(Buffer.from('\n'));
    expect(shared.state.held).toBe(7);
    // A whole frame in one chunk is never held, so it needs no room.
    const frames: string[] = [];
    const third = new LineSplitter(1000, (f) => frames.push(f.toString()), () => undefined, shared);
    third.push(Buffer.from('a whole frame\n'));
    expect(frames).toEqual(['a whole frame']);
  });

  it('reports the per-frame cap as reason frame, and gives back what it held', () => {
    const shared = budget(100);
    const overflows: string[] = [];
    const splitter = new LineSplitter(5, () => undefined, (_n, reason) => overflows.push(reason), shared);
    splitter.push(Buffer.from('123'));
    splitter.push(Buffer.from('456'));
    expect(overflows).toEqual(['frame']);
    expect(shared.state.held).toBe(0);
  });

  it('dispose gives back an unfinished frame and takes nothing after', () => {
    const shared = budget(100);
    const frames: string[] = [];
    const splitter = new LineSplitter(1000, (f) => frames.push(f.toString()), () => undefined, shared);
    splitter.push(Buffer.from('unfinished'));
    expect(shared.state.held).toBe(10);
    splitter.dispose();
    expect(shared.state.held).toBe(0);
    expect(splitter.pendingBytes).toBe(0);
    splitter.push(Buffer.from('more\n'));
    expect(frames).toEqual([]);
    expect(shared.state.held).toBe(0);
  });
});
