// Waiting for a condition in a test. A wait never returns at its deadline as if the condition
// held: it throws there, naming what it waited for and the last thing it saw, so a red run says
// why in one line instead of failing an assertion further on (or as vitest's bare "timed out").
import { TestRunner } from 'vitest';

/** How long a wait begun now may last: until just before the running test's own timeout (or
 * the default timeout outside a test, in a hook), so the wait's message is the one shown. */
export function waitBudgetMs(): number {
  const test = TestRunner.getCurrentTest();
  const timeout = test !== undefined && test.timeout > 0 ? test.timeout : 30_000;
  const started = test?.result?.startTime ?? Date.now();
  return Math.max(1_000, started + timeout - Date.now() - 1_500);
}

/** A value as a line of a failure message, cut to a readable length. */
export function shown(value: unknown, max = 400): string {
  let text: string;
  try {
    // undefined (and functions) have no JSON: String() shows them.
    const json = JSON.stringify(value) as string | undefined;
    text = json ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

export interface UntilOptions<T> {
  /** Fail after this long (default: the rest of the test's own time). */
  deadlineMs?: number;
  /** How often to look again (default 20 ms): a polling interval, not a timing. */
  everyMs?: number;
  /** How the last value is shown in the failure (default: JSON, cut). */
  show?: (last: T) => string;
}

/**
 * Looks at `look()` until `ready` holds for what it returned, and returns that. At the
 * deadline it throws `waited N ms for <what>; last seen: <value>`.
 */
export async function until<T>(what: string, look: () => T | Promise<T>, ready: (value: T) => boolean = Boolean, options: UntilOptions<T> = {}): Promise<T> {
  const deadlineMs = options.deadlineMs ?? waitBudgetMs();
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await look();
    if (ready(value)) return value;
    if (Date.now() >= end) throw new Error(`waited ${deadlineMs} ms for ${what}; last seen: ${(options.show ?? shown)(value)}`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 20));
  }
}

/**
 * `promise`, or a failure naming `what` once the test's time is nearly out. The failure is
 * marked handled here, so a wait nobody awaits any more cannot fail a later test.
 */
export function within<T>(what: string, promise: Promise<T>, deadlineMs = waitBudgetMs(), lastSeen?: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${deadlineMs} ms for ${what}${lastSeen === undefined ? '' : `; last seen: ${lastSeen()}`}`)), deadlineMs);
    timer.unref();
  });
  const raced = Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
  raced.catch(() => undefined);
  return raced;
}
