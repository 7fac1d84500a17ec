import type { EgressSandboxParts } from './egress-launch.js';
import type { Mount, SandboxPlan } from './profile.js';

/**
 * bubblewrap's argument list for one launch (pure: unit-tested against plans). The shape is
 * Flatpak's: a new, empty root on tmpfs, into which only the plan's paths are bound; every
 * namespace bwrap can make without privilege but the network's when the service has the
 * host's network; a new session (no controlling terminal: TIOCSTI has nothing to push into),
 * no capabilities, and death with its parent: when the daemon dies, bwrap's init goes, and
 * the kernel ends every process of the sandbox's pid namespace with it.
 */

/** The options of bwrap this launch needs (a bwrap without them is refused) and the optional ones, as its --help lists them. */
export const REQUIRED_OPTIONS = ['--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', '--new-session', '--cap-drop', '--info-fd', '--tmpfs', '--chdir'] as const;

export interface BwrapFeatures {
  /** --disable-userns (0.8): no user namespace inside, so no capabilities can be had in one. */
  readonly disableUserns: boolean;
  /** --ro-bind-data (0.5): the one-user /etc/passwd and /etc/group. */
  readonly bindData: boolean;
}

/** The file descriptors a launch is given besides stdio (stdio-transport.ts opens them). */
export const SANDBOX_FDS = { info: 3, passwd: 4, group: 5 } as const;

export interface BwrapTarget {
  readonly command: string;
  readonly args: readonly string[];
  /** prlimit inside the sandbox (under /usr), to cap its tasks; null: none found. */
  readonly prlimit: string | null;
  readonly maxTasks: number;
  /** Whether bwrap writes its info (the sandbox's init pid, for the stop ladder) to SANDBOX_FDS.info. */
  readonly info: boolean;
  /** Whether the one-user passwd and group come on SANDBOX_FDS.passwd and .group (needs features.bindData). */
  readonly identity: boolean;
  /** Host grants and `ask`: the egress proxy's socket and bridge (egress-launch.ts), mounted after the plan's, and the bridge run in front of the server. */
  readonly egress?: EgressSandboxParts | undefined;
}

function mountArgs(mount: Mount): string[] {
  switch (mount.access) {
    case 'tmpfs':
      return ['--tmpfs', mount.path];
    case 'read':
      // -try: a grant that vanished since is simply not there, as on the host.
      return ['--ro-bind-try', mount.path, mount.path];
    case 'write':
      return ['--bind-try', mount.path, mount.path];
  }
}

export function bwrapArgs(plan: SandboxPlan, target: BwrapTarget, features: BwrapFeatures): string[] {
  const namespaces = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', ...(plan.network !== 'host' ? ['--unshare-net'] : [])];
  const hardening = [...(features.disableUserns ? ['--disable-userns'] : []), '--new-session', '--die-with-parent', '--cap-drop', 'ALL', '--hostname', 'wisp-sandbox'];
  const trees = ['--proc', '/proc', '--dev', '/dev', ...plan.symlinks.flatMap((link) => ['--symlink', link.target, link.path])];
  const identity = target.identity && features.bindData ? ['--ro-bind-data', String(SANDBOX_FDS.passwd), '/etc/passwd', '--ro-bind-data', String(SANDBOX_FDS.group), '/etc/group'] : [];
  const limit = target.prlimit !== null ? [target.prlimit, `--nproc=${target.maxTasks}:${target.maxTasks}`, '--'] : [];
  return [
    ...namespaces,
    ...hardening,
    ...(target.info ? ['--info-fd', String(SANDBOX_FDS.info)] : []),
    ...trees,
    ...plan.mounts.flatMap(mountArgs),
    ...identity,
    ...(target.egress?.bwrapArgs ?? []),
    '--chdir',
    plan.chdir,
    '--',
    ...limit,
    ...(target.egress?.commandPrefix ?? []),
    target.command,
    ...target.args,
  ];
}

/** Which of bwrap's options its --help lists. */
export function bwrapFeatures(help: string): { features: BwrapFeatures; missing: string[] } {
  const has = (option: string): boolean => new RegExp(`(^|\\s)${option}(\\s|$)`, 'm').test(help);
  return {
    features: { disableUserns: has('--disable-userns'), bindData: has('--ro-bind-data') },
    missing: REQUIRED_OPTIONS.filter((option) => !has(option)),
  };
}

/** The one-user passwd and group the sandbox sees: the user's name, ids and the private home, no one else. */
export function identityFiles(user: { readonly name: string; readonly uid: number; readonly gid: number }, home: string): { passwd: string; group: string } {
  const name = /^[A-Za-z0-9._-]{1,32}$/.test(user.name) ? user.name : 'user';
  return { passwd: `${name}:x:${user.uid}:${user.gid}::${home}:/bin/sh\n`, group: `${name}:x:${user.gid}:\n` };
}
