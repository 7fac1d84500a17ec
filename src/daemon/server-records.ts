import { promises as fs } from 'node:fs';
import { groupMembers, groupRunning, pidExists, processStartTime, startedSince, writeFileAtomic } from '../util/index.js';
import { readSafe } from '../util/index.js';

/** One running MCP server, as recorded in the runtime dir: its process group and its leader's start time. */
export interface ServerRecord {
  readonly serviceId: string;
  readonly name: string;
  /** The leader's pid, which is also its process group id (servers are spawned detached). */
  readonly pgid: number;
  readonly startTime: string;
}

/** What the next start did about a recorded server. */
export interface RecoveredServer {
  readonly serviceId: string;
  readonly name: string;
  readonly pid: number;
  /** stopped: it was still ours and is now stopped; gone: nothing ran under that pid; not_ours: the pid now belongs to another process, left alone. */
  readonly outcome: 'stopped' | 'gone' | 'not_ours';
}

/**
 * `<socket>.servers.json` in the runtime dir: the MCP servers this daemon has running, so
 * that after a crash (kill -9) the next start can stop the ones left behind. Written
 * atomically on every change, one write at a time; the file goes once none runs.
 */
export class ServerRecords {
  private readonly running = new Map<number, ServerRecord>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** A server was spawned: record it (once its start time is known). */
  started(serviceId: string, name: string, pid: number): void {
    this.enqueue(async () => {
      const startTime = await processStartTime(pid);
      // Gone already, or a platform where a pid cannot be told from its successor: nothing safe to record.
      if (startTime === undefined) return;
      this.running.set(pid, { serviceId, name, pgid: pid, startTime });
      await this.save();
    });
  }

  /** A server's process group is empty: forget it. */
  ended(pid: number): void {
    this.enqueue(async () => {
      if (!this.running.delete(pid)) return;
      await this.save();
    });
  }

  /** Waits for every pending write. */
  flush(): Promise<void> {
    return this.queue;
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((error: unknown) => this.onError(error));
  }

  private async save(): Promise<void> {
    if (this.running.size === 0) {
      await fs.rm(this.file, { force: true });
      return;
    }
    await writeFileAtomic(this.file, `${JSON.stringify({ schemaVersion: 1, servers: [...this.running.values()] }, null, 2)}\n`);
  }

  /**
   * At start, before anything else runs: stops what a crashed run left. A recorded group is
   * signalled only if it is provably still ours (see identify), so a pid the kernel has
   * given to another process is never hit. SIGTERM to the group, then SIGKILL
   * after `graceMs`. The file is removed afterwards.
   */
  static async recover(file: string, graceMs: number): Promise<RecoveredServer[]> {
    let text: string;
    try {
      text = await readSafe(file, 1024 * 1024);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records = parseRecords(text);
    const outcomes: RecoveredServer[] = [];
    for (const record of records) {
      const outcome = await identify(record);
      if (outcome === 'ours') await stopGroup(record.pgid, graceMs);
      outcomes.push({ serviceId: record.serviceId, name: record.name, pid: record.pgid, outcome: outcome === 'ours' ? 'stopped' : outcome });
    }
    await fs.rm(file, { force: true });
    return outcomes;
  }
}

function parseRecords(text: string): ServerRecord[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const servers = typeof parsed === 'object' && parsed !== null ? (parsed as { servers?: unknown }).servers : undefined;
  if (!Array.isArray(servers)) return [];
  const records: ServerRecord[] = [];
  for (const item of servers.slice(0, 1024) as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { serviceId, name, pgid, startTime } = item as Record<string, unknown>;
    if (typeof serviceId !== 'string' || typeof name !== 'string' || typeof startTime !== 'string' || startTime === '') continue;
    // pid 1 (init) and our own group are never a server of ours.
    if (typeof pgid !== 'number' || !Number.isInteger(pgid) || pgid <= 1 || pgid === process.pid) continue;
    records.push({ serviceId, name, pgid, startTime });
  }
  return records;
}

/**
 * Whether a recorded group is still ours:
 * - its leader (even a zombie nobody reaped) has the recorded start time: ours; another one: not ours;
 * - the leader is gone (reaped) but the group lives on (Linux, which never reuses a pid while
 *   a group of that id exists): ours if every member started since the recorded leader, in
 *   the same boot. Elsewhere a leaderless group cannot be listed without a shell: left alone.
 */
async function identify(record: ServerRecord): Promise<'ours' | 'gone' | 'not_ours'> {
  const leader = await processStartTime(record.pgid, { zombies: true });
  if (leader !== undefined) return leader === record.startTime ? 'ours' : 'not_ours';
  const members = await groupMembers(record.pgid);
  if (members === undefined) return pidExists(record.pgid) ? 'not_ours' : 'gone';
  if (members.length === 0) return 'gone';
  return members.every((m) => startedSince(m.startTime, record.startTime)) ? 'ours' : 'not_ours';
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is empty
  }
}

/** SIGTERM to the group, then SIGKILL to whatever is left of it after `graceMs`. */
async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  // No event says a group became empty (and orphans' zombies may linger unreaped): poll, briefly.
  for (let wait = 10; Date.now() < deadline && (await groupRunning(pgid)); wait = Math.min(wait * 2, 100)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  if (await groupRunning(pgid)) signalGroup(pgid, 'SIGKILL');
}

