/**
 * The glibc malloc settings wispd is started with (see daemonLaunchEnv), each with the glibc
 * tunable that sets the same thing: a user who set either keeps their value.
 */
export const DAEMON_MALLOC_SETTINGS = [
  { variable: 'MALLOC_ARENA_MAX', value: '2', tunable: 'glibc.malloc.arena_max' },
  { variable: 'MALLOC_TRIM_THRESHOLD_', value: '131072', tunable: 'glibc.malloc.trim_threshold' },
  { variable: 'MALLOC_MMAP_THRESHOLD_', value: '131072', tunable: 'glibc.malloc.mmap_threshold' },
] as const;

/**
 * The environment `wispctl daemon start` starts wispd with (the systemd unit sets the same in
 * its Environment= lines): the caller's, with glibc's malloc told to keep less of what it freed.
 *
 * - MALLOC_ARENA_MAX=2. glibc gives each thread that allocates an arena of its own (up to 8
 *   per CPU) and keeps what was freed in it. V8's background threads (optimising compiles)
 *   allocate there while a busy daemon warms up, and that memory stays resident once the work
 *   is done. Measured (bench/memory.mjs's workload, 5 interleaved runs each): RSS after 10,000
 *   calls 83.0 MB (82.3 to 87.2) by default, 81.0 MB (79.7 to 81.5) with two arenas, 81.0 MB
 *   (80.3 to 81.4) with one; idle and with 96 tools unchanged. Two, not one: the main thread
 *   keeps an arena of its own, so it never waits on a compile thread's allocation.
 * - MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_ at 128 KB, glibc's own starting values,
 *   fixed. By default glibc raises both each time a large block it mapped is freed (V8's
 *   compiler frees blocks of a few hundred KB): from then on such blocks come from the
 *   arenas, and what is freed there stays resident until twice that much is free at the top.
 *   Fixed, a block over 128 KB is always mapped and given back when freed. Measured (the same
 *   workload, 6 interleaved runs each, two arenas in both): RSS after the calls 82.3 MB (80.1
 *   to 84.3) without, 80.6 MB (79.2 to 81.3) with; at 16 calls in flight (6 and then 8 paired
 *   runs) CPU per call within the noise and the RSS after 10,000 calls 1 to 3% lower in every pair.
 *
 * glibc reads these only at process start, so they cannot be set from inside wispd. Other C
 * libraries (macOS, musl) ignore them. A value the user set (or a glibc tunable for it) is kept.
 */
export function daemonLaunchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const tunables = env.GLIBC_TUNABLES ?? '';
  const added: Record<string, string> = {};
  for (const { variable, value, tunable } of DAEMON_MALLOC_SETTINGS) {
    if (env[variable] === undefined && !tunables.includes(tunable)) added[variable] = value;
  }
  return { ...env, ...added };
}
