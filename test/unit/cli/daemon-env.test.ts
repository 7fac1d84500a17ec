import { describe, expect, it } from 'vitest';
import { daemonLaunchEnv } from '../../../src/cli/daemon-env.js';

const MALLOC = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };

describe('the environment wispctl daemon start gives wispd', () => {
  it("is the caller's, with glibc's malloc arenas capped at two and its trim and mmap thresholds fixed", () => {
    const env = { PATH: '/usr/bin', HOME: '/home/u', WISP_HOME: '/w' };
    expect(daemonLaunchEnv(env)).toEqual({ ...env, ...MALLOC });
    // The caller's own object is not changed.
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/u', WISP_HOME: '/w' });
  });

  it('keeps each setting the user chose, as the variable or as a glibc tunable, and adds the others', () => {
    expect(daemonLaunchEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({ ...MALLOC, MALLOC_ARENA_MAX: '8' });
    expect(daemonLaunchEnv({ MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({ ...MALLOC, MALLOC_MMAP_THRESHOLD_: '65536' });
    const tunable = { GLIBC_TUNABLES: 'glibc.malloc.arena_max=4:glibc.malloc.trim_threshold=0:glibc.malloc.tcache_count=0' };
    expect(daemonLaunchEnv(tunable)).toEqual({ ...tunable, MALLOC_MMAP_THRESHOLD_: '131072' });
  });
});
