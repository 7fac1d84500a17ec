import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { WispError } from '../core/index.js';
import { openSafe, readSafe } from '../util/index.js';
import { pidExists, processStartTime } from '../util/index.js';

interface Holder {
  readonly pid: number;
  /** The holder's start time (see processStartTime): a pid reused by another process does not match. */
  readonly startTime: string | undefined;
  readonly socket: string;
  readonly token: string;
}

const BREAK_GUARD_STALE_MS = 10_000;

/**
 * A pid lock file. Node has no flock(2), so: the lock is created whole with link(2), which
 * fails if it exists; a lock whose pid is dead is stale and is broken under a second guard
 * (mkdir, atomic) so two starters cannot both break it and both win.
 *
 * A holder is the pid *and* its start time: a lock naming a live pid whose start time differs
 * (the pid was reused, say after a reboot) is stale. A lock without a start time (older
 * versions, or a platform where it cannot be read) counts as held only while its pid lives
 * and its socket answers, or when the pid is ours. Our own pid with our start time always
 * counts: two daemons built in one process on the same data dir must also collide.
 */
export class InstanceLock {
  private released = false;

  private constructor(
    readonly file: string,
    private readonly token: string,
  ) {}

  static async acquire(file: string, socket: string): Promise<InstanceLock> {
    const token = randomBytes(12).toString('hex');
    const startTime = await processStartTime(process.pid);
    const content = `${JSON.stringify({ pid: process.pid, startTime, socket, token })}\n`;
    for (let attempt = 0; attempt < 200; attempt++) {
      const temp = `${file}.${token}.tmp`;
      const handle = await openSafe(temp, 'create');
      try {
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
      try {
        await fs.link(temp, file);
        await sweepLockTemps(file);
        return new InstanceLock(file, token);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      } finally {
        await fs.rm(temp, { force: true });
      }
      const holder = await readHolder(file);
      if (holder === undefined) continue; // removed meanwhile, or unreadable: try again
      if (await isHeld(holder)) {
        throw new WispError('ALREADY_RUNNING', `wispd is already running (pid ${holder.pid}, socket ${holder.socket})`, {
          pid: holder.pid,
          socket: holder.socket,
          lock: file,
        });
      }
      await breakStale(file, holder);
    }
    throw new WispError('ALREADY_RUNNING', `could not take the lock ${file}: it keeps changing hands`, { lock: file });
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const holder = await readHolder(this.file);
    if (holder?.token === this.token) await fs.rm(this.file, { force: true });
  }
}

async function readHolder(file: string): Promise<Holder | undefined> {
  let text: string;
  try {
    text = await readSafe(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) {
      const { pid, startTime, socket, token } = parsed as Record<string, unknown>;
      if (typeof pid === 'number' && Number.isInteger(pid) && pid > 0) {
        return {
          pid,
          startTime: typeof startTime === 'string' ? startTime : undefined,
          socket: typeof socket === 'string' ? socket : 'unknown',
          token: typeof token === 'string' ? token : '',
        };
      }
    }
  } catch {
    // fall through: an unparseable lock cannot name a live holder
  }
  return { pid: 0, startTime: undefined, socket: 'unknown', token: '' };
}

/** Whether the lock's holder still runs: its pid, with the same start time (so not a reused pid). */
async function isHeld(holder: Holder): Promise<boolean> {
  if (!pidExists(holder.pid)) return false;
  if (holder.startTime !== undefined) {
    const now = await processStartTime(holder.pid);
    // Where start times cannot be read at all, a live pid is all we can go by.
    if (now === undefined && (await processStartTime(process.pid)) === undefined) return true;
    return now === holder.startTime;
  }
  if (holder.pid === process.pid) return true;
  return socketAnswers(holder.socket);
}

function socketAnswers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createConnection(socket);
    const timer = setTimeout(() => {
      probe.destroy();
      resolve(false);
    }, 2000);
    probe.once('connect', () => {
      clearTimeout(timer);
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

async function breakStale(file: string, stale: Holder): Promise<void> {
  const guard = `${file}.break`;
  try {
    await fs.mkdir(guard, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const stat = await fs.stat(guard).catch(() => undefined);
    if (stat !== undefined && Date.now() - stat.mtimeMs > BREAK_GUARD_STALE_MS) await fs.rm(guard, { recursive: true, force: true });
    else await delay(20);
    return;
  }
  try {
    const now = await readHolder(file);
    if (now !== undefined && now.token === stale.token && now.pid === stale.pid) await fs.rm(file, { force: true });
  } finally {
    await fs.rm(guard, { recursive: true, force: true });
  }
}

/** A lock temp file older than this was left by a starter that was killed (a live one keeps it for milliseconds). */
const LOCK_TEMP_STALE_MS = 60_000;

/** With the lock held: removes the temp files (`<lock>.<24 hex>.tmp`) that killed starters left. */
async function sweepLockTemps(file: string): Promise<void> {
  const dir = path.dirname(file);
  const base = path.basename(file);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !/^[0-9a-f]{24}\.tmp$/.test(name.slice(base.length + 1))) continue;
    const stat = await fs.lstat(path.join(dir, name)).catch(() => undefined);
    if (stat !== undefined && Date.now() - stat.mtimeMs > LOCK_TEMP_STALE_MS) await fs.rm(path.join(dir, name), { force: true });
  }
}
