import type { SandboxPlan } from './profile.js';

/**
 * macOS: a Seatbelt profile (SBPL) for `/usr/bin/sandbox-exec -p PROFILE -- command args`,
 * deny by default, with the plan's grants (pure: unit-tested against plans). It has NOT been
 * run: these machines are Linux. What it gives: reads of the system's own trees (/usr,
 * /System, /Library, /bin, /sbin, /private/etc's needed files, the dyld cache) and of the
 * plan's read mounts; reads and writes of its write mounts and of its private home and
 * temporary directory (real directories the launcher makes, since macOS has no tmpfs per
 * process; tmpfs mounts of the plan become these); processes it forks (signals only to
 * them); the network only when the plan has the host's. No Mach service but the few every
 * program needs to start (notifications of time zone and log), no IPC with other processes,
 * no writes anywhere else, the user's home and Wisp's data and socket included.
 */

/** A string in SBPL: double-quoted, with its backslashes and quotes escaped. */
export function sbplString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** macOS's /tmp and /etc are symlinks into /private: grant the real path too. */
function withPrivate(p: string): string[] {
  return /^\/(tmp|etc|var)(\/|$)/.test(p) ? [p, `/private${p}`] : [p];
}

const SYSTEM_READ = ['/usr', '/System', '/Library', '/bin', '/sbin', '/opt/homebrew', '/private/var/db/dyld', '/private/var/db/timezone', '/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/fd'];
const SYSTEM_MACH = ['com.apple.system.notification_center', 'com.apple.system.logger', 'com.apple.system.opendirectoryd.libinfo', 'com.apple.trustd.agent'];

export interface MacosDirs {
  /** The private home and temporary directory the launcher made for this launch. */
  readonly home: string;
  readonly tmp: string;
}

export function seatbeltProfile(plan: SandboxPlan, dirs: MacosDirs): string {
  const reads = plan.mounts.filter((m) => m.access === 'read').flatMap((m) => withPrivate(m.path));
  const writes = [...plan.mounts.filter((m) => m.access === 'write').flatMap((m) => withPrivate(m.path)), dirs.home, dirs.tmp];
  const subpaths = (list: readonly string[]): string => list.map((p) => `(subpath ${sbplString(p)})`).join(' ');
  return [
    '(version 1)',
    '(deny default)',
    // Its own processes only: fork and exec, signals within the sandbox.
    '(allow process-fork)',
    '(allow process-exec*)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow file-read-metadata)',
    `(allow file-read* ${subpaths([...SYSTEM_READ, ...reads, ...writes])})`,
    `(allow file-write* ${subpaths(writes)} (literal "/dev/null") (literal "/dev/tty"))`,
    `(allow mach-lookup ${SYSTEM_MACH.map((name) => `(global-name ${sbplString(name)})`).join(' ')})`,
    '(allow ipc-posix-shm-read-data ipc-posix-shm-write-data (ipc-posix-name-regex #"^/tmp/"))',
    ...(plan.network === 'host' ? ['(allow network*)', '(allow system-socket)'] : ['(allow network* (local unix-socket (subpath ' + sbplString(dirs.tmp) + ')))']),
    '',
  ].join('\n');
}

/** The argv of a sandboxed launch on macOS (the command is an absolute path: it cannot pass for an option). */
export function sandboxExecArgs(profile: string, command: string, args: readonly string[]): string[] {
  return ['-p', profile, command, ...args];
}
