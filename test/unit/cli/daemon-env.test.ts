import { describe, expect, it } from 'vitest';
import { daemonLaunchEnv } from '../../../src/cli/daemon-env.js';

describe('the environment wispctl daemon start gives wispd', () => {
  it("is the caller's, with glibc's malloc arenas capped at two", () => {
    const env = { PATH: '/usr/bin', HOME: '/home/u', WISP_HOME: '/w' };
    expect(daemonLaunchEnv(env)).toEqual({ ...env, MALLOC_ARENA_MAX: '2' });
    // The caller's own object is not changed.
    expect(env).not.toHaveProperty('MALLOC_ARENA_MAX');
  });

  it('keeps a cap the user chose, as the variable or as a glibc tunable', () => {
    expect(daemonLaunchEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({ MALLOC_ARENA_MAX: '8' });
    const tunable = { GLIBC_TUNABLES: 'glibc.malloc.arena_max=4:glibc.malloc.tcache_count=0' };
    expect(daemonLaunchEnv(tunable)).toEqual(tunable);
  });
});
