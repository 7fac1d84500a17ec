import { describe, expect, it } from 'vitest';
import { bwrapArgs, bwrapFeatures, identityFiles, REQUIRED_OPTIONS } from '../../../src/mcp/sandbox/bwrap.js';
import { sandboxExecArgs, sbplString, seatbeltProfile } from '../../../src/mcp/sandbox/macos.js';
import { planLaunch, type SandboxProfile } from '../../../src/mcp/sandbox/profile.js';

const system = [
  { path: '/usr', kind: 'dir' as const },
  { path: '/bin', kind: 'symlink' as const, target: 'usr/bin' },
];
const profile = (extra: Partial<SandboxProfile> = {}): SandboxProfile => ({ enabled: true, read: ['/srv/data'], write: ['/home/me/out'], net: { mode: 'none' }, ...extra });
const plan = (p = profile()) => planLaunch(p, { home: '/home/me', cwd: '/home/me/project', system, needs: [{ path: '/opt/node', why: 'runtime' }], args: [] });
const target = { command: '/opt/node/bin/node', args: ['server.js', '--flag'], prlimit: '/usr/bin/prlimit', maxTasks: 512, info: true, identity: true };
const features = { disableUserns: true, bindData: true };

/** The values of every occurrence of a flag that takes `n` values. */
function valuesOf(args: readonly string[], flag: string, n = 1): string[][] {
  return args.flatMap((arg, i) => (arg === flag ? [args.slice(i + 1, i + 1 + n)] : []));
}

describe('bwrap arguments', () => {
  it('make every namespace, the network\'s too, a new session, no capabilities, death with the parent', () => {
    const args = bwrapArgs(plan(), target, features);
    const head = args.slice(0, args.indexOf('--'));
    for (const flag of ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--new-session', '--die-with-parent', '--disable-userns']) expect(head).toContain(flag);
    expect(valuesOf(head, '--cap-drop')).toEqual([['ALL']]);
    expect(valuesOf(head, '--proc')).toEqual([['/proc']]);
    expect(valuesOf(head, '--dev')).toEqual([['/dev']]);
    expect(valuesOf(head, '--info-fd')).toEqual([['3']]);
  });

  it('share the network only with mode all', () => {
    expect(bwrapArgs(plan(profile({ net: { mode: 'all' } })), target, features)).not.toContain('--unshare-net');
    expect(bwrapArgs(plan(profile({ net: { mode: 'ask' } })), target, features)).toContain('--unshare-net');
    expect(bwrapArgs(plan(profile({ net: { mode: 'hosts', hosts: ['a.example'] } })), target, features)).toContain('--unshare-net');
  });

  it('with host grants, mount the egress socket and bridge after every mount of the plan, and run the bridge in front of the server, under the task limit', () => {
    const egress = { bwrapArgs: ['--ro-bind', '/run/user/1/wisp/egress-x/proxy.sock', '/run/wisp-egress/proxy.sock'], commandPrefix: ['/usr/bin/node', '/run/wisp-egress/bridge.mjs', '--socket', '/run/wisp-egress/proxy.sock', '--'] };
    const args = bwrapArgs(plan(profile({ net: { mode: 'hosts', hosts: ['a.example'] } })), { ...target, egress }, features);
    const end = args.indexOf('--');
    const socketBind = args.indexOf('/run/user/1/wisp/egress-x/proxy.sock') - 1;
    expect(args[socketBind]).toBe('--ro-bind');
    // After the last of the plan's binds (a later mount covers an earlier one), before the command.
    expect(socketBind).toBeGreaterThan(args.lastIndexOf('--bind-try'));
    expect(socketBind).toBeLessThan(end);
    expect(args.slice(end + 1)).toEqual(['/usr/bin/prlimit', '--nproc=512:512', '--', ...egress.commandPrefix, '/opt/node/bin/node', 'server.js', '--flag']);
    expect(args).toContain('--unshare-net');
  });

  it('bind the grants read-only and read-write at their own paths, the home and /tmp empty, and start in the cwd', () => {
    const args = bwrapArgs(plan(), target, features);
    expect(valuesOf(args, '--ro-bind-try', 2)).toEqual(expect.arrayContaining([['/usr', '/usr'], ['/srv/data', '/srv/data'], ['/opt/node', '/opt/node']]));
    expect(valuesOf(args, '--bind-try', 2)).toEqual([['/home/me/out', '/home/me/out'], ['/home/me/project', '/home/me/project']]);
    expect(valuesOf(args, '--tmpfs')).toEqual([['/tmp'], ['/home/me']]);
    expect(valuesOf(args, '--symlink', 2)).toEqual([['usr/bin', '/bin']]);
    // The private home comes before what is bound inside it.
    expect(args.indexOf('/home/me')).toBeLessThan(args.indexOf('/home/me/out'));
    expect(valuesOf(args, '--chdir')).toEqual([['/home/me/project']]);
    expect(valuesOf(args, '--ro-bind-data', 2)).toEqual([['4', '/etc/passwd'], ['5', '/etc/group']]);
  });

  it('end with the command under prlimit, its arguments item by item', () => {
    const args = bwrapArgs(plan(), target, features);
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['/usr/bin/prlimit', '--nproc=512:512', '--', '/opt/node/bin/node', 'server.js', '--flag']);
    const bare = bwrapArgs(plan(), { ...target, prlimit: null, info: false, identity: false }, { disableUserns: false, bindData: true });
    expect(bare.slice(bare.indexOf('--') + 1)).toEqual(['/opt/node/bin/node', 'server.js', '--flag']);
    expect(bare).not.toContain('--info-fd');
    expect(bare).not.toContain('--ro-bind-data');
    expect(bare).not.toContain('--disable-userns');
  });

  it('reads what a bwrap offers from its --help, and names what a too old one lacks', () => {
    const help = `usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n${REQUIRED_OPTIONS.map((o) => `    ${o} ARG   something`).join('\n')}\n    --ro-bind-data FD DEST   Copy\n`;
    expect(bwrapFeatures(help)).toEqual({ features: { disableUserns: false, bindData: true }, missing: [] });
    expect(bwrapFeatures(help.replace('--die-with-parent', '--die-with-nothing')).missing).toEqual(['--die-with-parent']);
  });

  it('names only the user in passwd and group, with the private home', () => {
    expect(identityFiles({ name: 'me', uid: 1000, gid: 1000 }, '/home/me')).toEqual({ passwd: 'me:x:1000:1000::/home/me:/bin/sh\n', group: 'me:x:1000:\n' });
    expect(identityFiles({ name: 'a:b\nroot', uid: 1, gid: 2 }, '/h').passwd).toBe('user:x:1:2::/h:/bin/sh\n');
  });
});

describe('the macOS Seatbelt profile (generated only: not run on these machines)', () => {
  it('denies by default and allows reads of the system and the read grants, writes of the write grants and its private dirs only', () => {
    const text = seatbeltProfile(plan(), { home: '/private/var/folders/x/home', tmp: '/private/var/folders/x/tmp' });
    const lines = text.split('\n');
    expect(lines[0]).toBe('(version 1)');
    expect(lines[1]).toBe('(deny default)');
    const read = lines.find((l) => l.startsWith('(allow file-read* ')) ?? '';
    const write = lines.find((l) => l.startsWith('(allow file-write* ')) ?? '';
    for (const p of ['/usr', '/System', '/srv/data', '/opt/node']) expect(read).toContain(`(subpath "${p}")`);
    for (const p of ['/home/me/out', '/home/me/project', '/private/var/folders/x/home', '/private/var/folders/x/tmp']) expect(write).toContain(`(subpath "${p}")`);
    expect(write).not.toContain('"/srv/data"');
    expect(write).not.toContain('"/usr"');
    // The private home is not the real one: the real home is granted nowhere.
    expect(text).not.toContain('(subpath "/home/me")');
    expect(text).toContain('(allow signal (target same-sandbox))');
    expect(text).not.toMatch(/\(allow network\*\)/);
  });

  it('allows the network only with mode all, and escapes what it quotes', () => {
    expect(seatbeltProfile(plan(profile({ net: { mode: 'all' } })), { home: '/h', tmp: '/t' })).toContain('(allow network*)');
    expect(sbplString('/a "b" \\c')).toBe('"/a \\"b\\" \\\\c"');
    const text = seatbeltProfile(plan(profile({ read: ['/x") (allow default) ("'] })), { home: '/h', tmp: '/t' });
    // A quote in a path stays inside its string: no rule of its own.
    expect(text).toContain('(subpath "/x\\") (allow default) (\\"")');
    expect(sandboxExecArgs('(version 1)', '/bin/echo', ['-n', 'x'])).toEqual(['-p', '(version 1)', '/bin/echo', '-n', 'x']);
  });
});
