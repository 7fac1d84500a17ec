import { describe, expect, it } from 'vitest';
import { until, waitBudgetMs, within } from '../../helpers/wait.js';

// The suite's waits: a red run must say what it waited for, never pass a deadline silently.
describe('the wait helpers', () => {
  it('until returns the value once it is ready', async () => {
    let n = 0;
    expect(await until('n to reach 3', () => ++n, (v) => v >= 3, { everyMs: 1 })).toBe(3);
  });

  it('until fails at its deadline with what it waited for and the last value it saw', async () => {
    await expect(until('the answer', () => ({ answer: 41 }), (v) => v.answer === 42, { deadlineMs: 30, everyMs: 5 })).rejects.toThrow(
      /^waited 30 ms for the answer; last seen: \{"answer":41\}$/,
    );
  });

  it('within fails with what it waited for and what it last saw; a promise that settles first wins', async () => {
    await expect(within('a promise that never settles', new Promise(() => undefined), 30, () => 'nothing yet')).rejects.toThrow(
      'waited 30 ms for a promise that never settles; last seen: nothing yet',
    );
    await expect(within('a value', Promise.resolve(7), 30)).resolves.toBe(7);
  });

  it('a wait lasts until just before the running test would time out', () => {
    const budget = waitBudgetMs();
    expect(budget).toBeGreaterThan(20_000);
    expect(budget).toBeLessThan(30_000);
  });
});
