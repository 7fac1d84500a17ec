import { setFlagsFromString } from 'node:v8';

/**
 * How V8 sizes wispd's heap. The daemon lives long and keeps little (about 20 MB live with
 * 96 tools), but V8's defaults favour throughput: an activation's allocation burst grows the
 * young generation to two 16 MB semi-spaces, and the old generation may grow to 4x its live
 * size between full collections; both stay resident. Measured (2 CPUs): RSS with 96 tools
 * 95 -> 74 MB, after 10,000 calls 123 -> 83 MB, for about 13% more daemon CPU per call at
 * 16 calls in flight (more, smaller scavenges; an interleaved A/B at load 1: 220 against
 * 195 us). Memory is what a per-user daemon that runs all day is judged by.
 *
 * A young generation this small is scavenged on the main thread alone: split across V8's
 * helper threads, each scavenge paid for waking them (on 2 CPUs shared with the servers and
 * clients, helpers wait to be scheduled), and saved nothing. Interleaved A/B at 16 calls in
 * flight, two runs: daemon CPU per call 200 -> 180 and 220 -> 195 us, throughput +3% and +7%.
 *
 * Set at run time by bin/wispd.js before the daemon's modules load: V8 reads both whenever
 * it resizes a space, so they hold however wispd is started (wispctl, a service unit, by hand).
 */
export const HEAP_FLAGS = [
  // The young generation stays at its initial size (a 1 MB semi-space) instead of doubling up to 16 MB.
  { flag: '--semi-space-growth-factor=1', family: /^--(?:(?:max|min)[-_])?semi[-_]space/ },
  // The old generation grows by a factor 1.5 at most between full collections (and by V8's minimum step of 8 MB).
  { flag: '--heap-growing-percent=50', family: /^--(?:heap[-_]growing[-_]percent|optimize[-_]for[-_]size|max[-_]heap[-_]size)/ },
  // Scavenges on the main thread only (read at each scavenge, so it holds when set at run time).
  { flag: '--no-parallel-scavenge', family: /^--(?:no[-_])?(?:parallel[-_]scavenge|single[-_]threaded(?:[-_]gc)?)\b/ },
] as const;

/** The flags to set: each one unless the user sized that part of the heap themselves (node flags or NODE_OPTIONS). */
export function heapFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const theirs = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  return HEAP_FLAGS.filter(({ family }) => !theirs.some((arg) => family.test(arg))).map(({ flag }) => flag);
}

export function applyHeapFlags(): void {
  const flags = heapFlags(process.execArgv, process.env.NODE_OPTIONS);
  if (flags.length > 0) setFlagsFromString(flags.join(' '));
}
