import { describe, expect, it } from 'vitest';
import { Queue } from '../../../src/util/index.js';

describe('Queue', () => {
  it('gives items back oldest first, across many compactions, and undefined when empty', () => {
    const queue = new Queue<number>();
    expect(queue.shift()).toBeUndefined();
    const out: number[] = [];
    for (let i = 0; i < 1000; i++) {
      queue.push(i);
      if (i % 3 === 2) out.push(queue.shift() ?? -1, queue.shift() ?? -1);
    }
    expect(queue.length).toBe(1000 - out.length);
    expect(queue.peek()).toBe(out.length);
    expect([...queue]).toEqual(Array.from({ length: 1000 - out.length }, (_, i) => out.length + i));
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) out.push(next);
    expect(out).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(queue.length).toBe(0);
  });
});
