import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Where prlimit (util-linux) is looked for: fixed directories, never the PATH. */
const PRLIMIT_DIRS = ['/usr/bin', '/bin', '/usr/local/bin'] as const;

/** What became of the daemon's core-dump limit at start. */
export type CoreDumps = { readonly disabled: true; readonly how: string } | { readonly disabled: false; readonly why: string };

/**
 * Sets the daemon's own core-file limit to zero, soft and hard, before it holds any secret:
 * a crash dump of wispd would hold every keychain value it read (one held a secret six
 * times). Node has no setrlimit, so on Linux util-linux's `prlimit --pid <own pid>
 * --core=0:0` does it (lowering one's own limit needs no privilege); the systemd unit also
 * says LimitCORE=0 and the LaunchAgent a Core limit of 0, so a daemon they start is covered
 * even without prlimit. PR_SET_DUMPABLE has no Node API and is not set (docs/security.md).
 */
export function disableCoreDumps(platform: NodeJS.Platform = process.platform, pid = process.pid, dirs: readonly string[] = PRLIMIT_DIRS): CoreDumps {
  if (platform !== 'linux') return { disabled: false, why: `no way to set it from Node on ${platform}: the LaunchAgent sets the core limit to 0` };
  const prlimit = dirs.map((dir) => path.join(dir, 'prlimit')).find(executable);
  if (prlimit === undefined) return { disabled: false, why: `prlimit not found in ${dirs.join(', ')} (util-linux); the systemd unit sets LimitCORE=0` };
  const run = spawnSync(prlimit, ['--pid', String(pid), '--core=0:0'], { shell: false, stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000, env: {} });
  if (run.status !== 0) return { disabled: false, why: `${prlimit} failed: ${run.stderr.toString('utf8').trim().slice(0, 200) || String(run.error ?? run.signal)}` };
  return { disabled: true, how: `${prlimit} --core=0:0` };
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What the log says of it: a warning when the daemon could not do it itself. */
export function logCoreDumps(logger: { debug(o: object, m: string): void; warn(o: object, m: string): void }, cores: CoreDumps): void {
  if (cores.disabled) logger.debug({ how: cores.how }, 'core dumps disabled');
  else logger.warn({ why: cores.why }, 'core dumps could not be disabled from wispd');
}
