import { describe, expect, it } from 'vitest';
import { WispError } from '../../../src/core/index.js';
import { defaultProfile, normalizeProfile, offeredPaths, orderMounts, planLaunch, type LaunchFacts, type Mount } from '../../../src/mcp/sandbox/profile.js';

const MERGED_USR: LaunchFacts['system'] = [
  { path: '/usr', kind: 'dir' },
  { path: '/bin', kind: 'symlink', target: 'usr/bin' },
  { path: '/lib', kind: 'symlink', target: 'usr/lib' },
  { path: '/lib64', kind: 'symlink', target: 'usr/lib64' },
];

function facts(extra: Partial<LaunchFacts> = {}): LaunchFacts {
  return { home: '/home/me', cwd: null, system: MERGED_USR, needs: [], args: [], ...extra };
}

describe('a sandbox plan', () => {
  it('by default gives the system read-only, a private home and /tmp, no network, and nothing of the home', () => {
    const plan = planLaunch(defaultProfile(), facts());
    const byPath = new Map(plan.mounts.map((m) => [m.path, m]));
    expect(byPath.get('/usr')).toEqual({ path: '/usr', access: 'read', why: 'system' });
    expect(byPath.get('/home/me')).toEqual({ path: '/home/me', access: 'tmpfs', why: 'home' });
    expect(byPath.get('/tmp')).toEqual({ path: '/tmp', access: 'tmpfs', why: 'tmp' });
    expect(plan.mounts.filter((m) => m.access === 'write')).toEqual([]);
    expect(plan.symlinks).toContainEqual({ path: '/bin', target: 'usr/bin' });
    expect(plan.network).toBe('none');
    expect(plan.chdir).toBe('/home/me');
    // Of /etc only what libraries read: never passwd, shadow or /etc whole; no resolver without the network.
    const etc = plan.mounts.filter((m) => m.path.startsWith('/etc')).map((m) => m.path);
    expect(etc).toContain('/etc/ld.so.cache');
    expect(etc).toContain('/etc/ssl');
    expect(etc).not.toContain('/etc');
    expect(etc).not.toContain('/etc/passwd');
    expect(etc).not.toContain('/etc/shadow');
    expect(etc).not.toContain('/etc/resolv.conf');
  });

  it('binds the cwd read-write and starts there, inside the private home, after the home', () => {
    const plan = planLaunch(defaultProfile(), facts({ cwd: '/home/me/project' }));
    const paths = plan.mounts.map((m) => m.path);
    expect(plan.mounts.find((m) => m.path === '/home/me/project')).toEqual({ path: '/home/me/project', access: 'write', why: 'cwd' });
    expect(paths.indexOf('/home/me')).toBeLessThan(paths.indexOf('/home/me/project'));
    expect(plan.chdir).toBe('/home/me/project');
  });

  it('adds what the command needs and the grants, read-only and read-write, and the resolver with the host network', () => {
    const profile = { enabled: true, read: ['/srv/data'], write: ['/home/me/out'], net: { mode: 'all' as const } };
    const plan = planLaunch(profile, facts({ needs: [{ path: '/opt/node', why: 'runtime' }, { path: '/usr/lib/node_modules/x', why: 'script' }] }));
    expect(plan.mounts).toContainEqual({ path: '/opt/node', access: 'read', why: 'runtime' });
    // Under /usr already: not bound twice.
    expect(plan.mounts.map((m) => m.path)).not.toContain('/usr/lib/node_modules/x');
    expect(plan.mounts).toContainEqual({ path: '/srv/data', access: 'read', why: 'granted' });
    expect(plan.mounts).toContainEqual({ path: '/home/me/out', access: 'write', why: 'granted' });
    expect(plan.network).toBe('host');
    expect(plan.mounts.map((m) => m.path)).toContain('/etc/resolv.conf');
  });

  it('gives host grants and ask the egress proxy, and no resolver configuration (the proxy resolves)', () => {
    for (const net of [{ mode: 'ask' as const }, { mode: 'hosts' as const, hosts: ['api.example.com'] }]) {
      const plan = planLaunch({ enabled: true, read: [], write: [], net }, facts());
      expect(plan.network).toBe('proxy');
      expect(plan.mounts.map((m) => m.path)).not.toContain('/etc/resolv.conf');
    }
  });

  it('offers the paths args name that no grant covers, never grants them', () => {
    const plan = planLaunch(defaultProfile(), facts({ cwd: '/home/me/project', args: ['/usr/lib/x/index.js', '/home/me/docs', '--root=/srv/files', '~/notes', '/home/me/project/a.txt', '-v', 'relative/x', '/tmp/y', '/dev/null'] }));
    expect(plan.offered).toEqual([
      { field: 'args[1]', path: '/home/me/docs' },
      { field: 'args[2]', path: '/srv/files' },
      { field: 'args[3]', path: '/home/me/notes' },
      { field: 'args[7]', path: '/tmp/y' },
    ]);
    expect(plan.mounts.map((m) => m.path)).not.toContain('/home/me/docs');
  });

  it('orders mounts ancestors first, one per path, write over read over tmpfs', () => {
    const mounts: Mount[] = [
      { path: '/home/me/a/b', access: 'read', why: 'granted' },
      { path: '/home/me', access: 'tmpfs', why: 'home' },
      { path: '/home/me', access: 'write', why: 'cwd' },
      { path: '/home/me/a', access: 'write', why: 'granted' },
      { path: '/home/me/a', access: 'read', why: 'granted' },
    ];
    expect(orderMounts(mounts)).toEqual([
      { path: '/home/me', access: 'write', why: 'cwd' },
      { path: '/home/me/a', access: 'write', why: 'granted' },
      { path: '/home/me/a/b', access: 'read', why: 'granted' },
    ]);
  });

  it('does not count a path under the private home as covered by it', () => {
    expect(offeredPaths(['/home/me/.ssh/id_rsa'], '/home/me', [{ path: '/home/me', access: 'tmpfs', why: 'home' }])).toEqual([{ field: 'args[0]', path: '/home/me/.ssh/id_rsa' }]);
  });
});

describe('a profile as given', () => {
  it('is normalized: absolute paths without .. or a trailing slash, hosts in lower case, no duplicates, write wins over read', () => {
    expect(normalizeProfile({ enabled: true, read: ['/a/b/../c/', '/a/c', '/x'], write: ['/x/'], net: { mode: 'hosts', hosts: ['API.example.com:443', 'api.example.com:443'] } })).toEqual({
      enabled: true,
      read: ['/a/c'],
      write: ['/x'],
      net: { mode: 'hosts', hosts: ['api.example.com:443'] },
    });
  });

  it('refuses a relative path, a line break and a port out of range, naming the field', () => {
    const codeOf = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (error) {
        return error instanceof WispError ? `${error.code}: ${error.message}` : String(error);
      }
      return undefined;
    };
    expect(codeOf(() => normalizeProfile({ enabled: true, read: ['docs'], write: [], net: { mode: 'none' } }))).toMatch(/^INVALID_CONFIG: sandbox.read\[0\]: "docs" is not an absolute path/);
    expect(codeOf(() => normalizeProfile({ enabled: true, read: [], write: ['/a\nb'], net: { mode: 'none' } }))).toMatch(/^INVALID_CONFIG: sandbox.write\[0\]/);
    expect(codeOf(() => normalizeProfile({ enabled: true, read: [], write: [], net: { mode: 'hosts', hosts: ['x.com:70000'] } }))).toMatch(/^INVALID_CONFIG: sandbox.net.hosts\[0\]: port 70000/);
  });
});
