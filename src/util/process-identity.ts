import { execFile } from 'node:child_process';
import { promises as fs, readlinkSync } from 'node:fs';

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
export async function processStartTime(
  pid: number,
  options: { readonly zombies?: boolean; readonly platform?: NodeJS.Platform } = {},
): Promise<string | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const platform = options.platform ?? process.platform;
  if (platform === 'linux') {
    const [stat, bootId] = await Promise.all([fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''), readBootId()]);
    const parsed = parseStat(stat);
    if (parsed === undefined || (options.zombies !== true && parsed.zombie)) return undefined;
    return `${bootId}:${parsed.start}`;
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

interface ProcStat {
  readonly zombie: boolean;
  readonly pgrp: number;
  readonly start: string;
}

function parseStat(stat: string): ProcStat | undefined {
  // The command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'.
  const close = stat.lastIndexOf(')');
  if (close === -1) return undefined;
  const fields = stat.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), fields[2] field 5 (pgrp), fields[19] field 22 (starttime).
  const [state, , pgrp] = fields;
  const start = fields[19];
  if (state === undefined || pgrp === undefined || start === undefined || !/^\d+$/.test(start)) return undefined;
  return { zombie: state === 'Z' || state === 'X', pgrp: Number(pgrp), start };
}

async function readBootId(): Promise<string> {
  return (await fs.readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim();
}

/**
 * Linux: the live (not zombie) members of process group `pgid`, with their start times in
 * the form of processStartTime. Elsewhere undefined: no way to list a group without a shell.
 */
export async function groupMembers(pgid: number, platform: NodeJS.Platform = process.platform): Promise<{ pid: number; startTime: string }[] | undefined> {
  if (platform !== 'linux') return undefined;
  const bootId = await readBootId();
  const names = await fs.readdir('/proc').catch(() => [] as string[]);
  const members: { pid: number; startTime: string }[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const parsed = parseStat(await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''));
    if (parsed !== undefined && parsed.pgrp === pgid && !parsed.zombie) members.push({ pid: Number(name), startTime: `${bootId}:${parsed.start}` });
  }
  return members;
}

/**
 * Whether any process of group `pgid` still runs. On Linux zombies do not count: killed
 * orphans stay zombies where nothing reaps them (a container whose init does not), and they
 * hold nothing. Elsewhere: whether the group can be signalled.
 */
export async function groupRunning(pgid: number): Promise<boolean> {
  const members = await groupMembers(pgid);
  if (members !== undefined) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux: the pid namespace a process is in (`pid:[4026532...]`), read while it runs; undefined elsewhere or once it is gone. */
export function pidNamespaceOf(pid: number, platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform !== 'linux') return undefined;
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * Linux: whether any process (not a zombie) still runs in pid namespace `ns`. A sandbox's
 * init dying has the kernel kill every process in its namespace, but they finish exiting
 * a moment later, and in whatever process groups they made: only the namespace says that
 * all of them have. The daemon's own namespace is never asked for.
 */
export async function namespaceRunning(ns: string): Promise<boolean> {
  if (ns === pidNamespaceOf(process.pid)) return false;
  const names = await fs.readdir('/proc').catch(() => [] as string[]);
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const link = await fs.readlink(`/proc/${name}/ns/pid`).catch(() => undefined);
    if (link !== ns) continue;
    const parsed = parseStat(await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''));
    if (parsed !== undefined && !parsed.zombie) return true;
  }
  return false;
}

/**
 * Whether `later` (a processStartTime) is in the same boot as `earlier` and not before it.
 * Only Linux start times can be compared so; others never are.
 */
export function startedSince(later: string, earlier: string): boolean {
  const a = /^(.+):(\d+)$/.exec(later);
  const b = /^(.+):(\d+)$/.exec(earlier);
  if (a?.[1] === undefined || a[2] === undefined || b?.[1] === undefined || b[2] === undefined) return false;
  return a[1] === b[1] && a[1] !== '' && BigInt(a[2]) >= BigInt(b[2]);
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
