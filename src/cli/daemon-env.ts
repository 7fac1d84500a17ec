/** How many malloc arenas wispd gets: see daemonLaunchEnv. */
export const DAEMON_MALLOC_ARENAS = '2';

/**
 * The environment `wispctl daemon start` starts wispd with (the systemd unit sets the same in
 * its Environment= line): the caller's, with glibc's malloc limited to two arenas.
 *
 * Why: glibc gives each thread that allocates an arena of its own (up to 8 per CPU) and keeps
 * what was freed in it. V8's background threads (optimising compiles) allocate there while a
 * busy daemon warms up, and that memory stays resident once the work is done. Measured
 * (bench/memory.mjs's workload, 5 interleaved runs each): RSS after 10,000 calls 83.0 MB
 * (82.3 to 87.2) by default, 81.0 MB (79.7 to 81.5) with two arenas, 81.0 MB (80.3 to 81.4)
 * with one; idle and with 96 tools unchanged. Two, not one: the main thread keeps an arena
 * of its own, so it never waits on a compile thread's allocation. glibc reads the setting
 * only at process start, so it cannot be set from inside wispd. Other C libraries (macOS,
 * musl) ignore it. A value the user set (or a glibc tunable for it) is kept.
 */
export function daemonLaunchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.MALLOC_ARENA_MAX !== undefined || (env.GLIBC_TUNABLES ?? '').includes('glibc.malloc.arena_max')) return env;
  return { ...env, MALLOC_ARENA_MAX: DAEMON_MALLOC_ARENAS };
}
