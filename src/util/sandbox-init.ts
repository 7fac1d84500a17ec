/**
 * What the daemon learns of a sandbox's init, and how it ends it: shared by the stdio
 * transport (a contained server) and the npm runner (a contained install).
 */

/** bwrap writes a few hundred bytes of info; anything longer is not its info. */
const INFO_CAP = 4096;

/**
 * Reads bwrap's `--info-fd` JSON as it arrives: `add` returns the sandbox init's pid as the
 * daemon sees it (`"child-pid"`) once that field has arrived whole, undefined before.
 */
export class BwrapInfo {
  private text = '';

  add(chunk: Buffer): number | undefined {
    if (this.text.length < INFO_CAP) this.text += chunk.toString('utf8');
    // The number ends where the field does: a chunk cut inside it must not give a shorter pid.
    const pid = /"child-pid"\s*:\s*([0-9]+)\s*[,}]/.exec(this.text)?.[1];
    return pid === undefined ? undefined : Number(pid);
  }
}

/** SIGKILL to one process (a sandbox's init: the kernel then kills its whole pid namespace); one gone already is no error. */
export function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: gone already
  }
}
