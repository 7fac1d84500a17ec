import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';

/**
 * Who a pid is: its start time, so that a pid the kernel has since given to another
 * process (after the holder died, or after a reboot) is never taken for the one recorded.
 *
 * - Linux: the boot id and field 22 of /proc/<pid>/stat (start time in clock ticks since
 *   boot): together unique for the life of the machine.
 * - macOS: `ps -o lstart= -p <pid>` run directly (execFile, no shell), start time to the second.
 * - Elsewhere: unknown (undefined); callers then treat a recorded pid as not provably ours.
 *
 * Undefined also when the process does not exist (or is a zombie).
 */
export async function processStartTime(pid: number, platform: NodeJS.Platform = process.platform): Promise<string | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (platform === 'linux') {
    const [stat, bootId] = await Promise.all([
      fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
      fs.readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => ''),
    ]);
    // The command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'.
    const close = stat.lastIndexOf(')');
    if (close === -1) return undefined;
    const fields = stat.slice(close + 2).split(' ');
    // fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
    const state = fields[0];
    const start = fields[19];
    if (state === undefined || state === 'Z' || state === 'X' || start === undefined || !/^\d+$/.test(start)) return undefined;
    return `${bootId.trim()}:${start}`;
  }
  if (platform === 'darwin') {
    return new Promise((resolve) => {
      execFile('/bin/ps', ['-o', 'lstart=', '-p', String(pid)], { env: { LC_ALL: 'C', PATH: '/bin:/usr/bin' }, timeout: 5000 }, (error, stdout) => {
        const text = stdout.trim();
        resolve(error === null && text !== '' ? text : undefined);
      });
    });
  }
  return undefined;
}

/** Whether the pid exists (any user's): signal 0 succeeds, or is refused for lack of permission. */
export function pidExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
