import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { WispError } from '../control/index.js';

interface Holder {
  readonly pid: number;
  readonly socket: string;
  readonly token: string;
}

const BREAK_GUARD_STALE_MS = 10_000;

/**
 * A pid lock file. Node has no flock(2), so: the lock is created whole with link(2), which
 * fails if it exists; a lock whose pid is dead is stale and is broken under a second guard
 * (mkdir, atomic) so two starters cannot both break it and both win.
 *
 * A live pid always counts as a holder, even our own: two daemons built in one process on
 * the same data dir must also collide.
 */
export class InstanceLock {
  private released = false;

  private constructor(
    readonly file: string,
    private readonly token: string,
  ) {}

  static async acquire(file: string, socket: string): Promise<InstanceLock> {
    const token = randomBytes(12).toString('hex');
    const content = `${JSON.stringify({ pid: process.pid, socket, token })}\n`;
    for (let attempt = 0; attempt < 200; attempt++) {
      const temp = `${file}.${token}.tmp`;
      await fs.writeFile(temp, content, { mode: 0o600, flag: 'wx' });
      try {
        await fs.link(temp, file);
        return new InstanceLock(file, token);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      } finally {
        await fs.rm(temp, { force: true });
      }
      const holder = await readHolder(file);
      if (holder === undefined) continue; // removed meanwhile, or unreadable: try again
      if (isAlive(holder.pid)) {
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
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0) {
      return { pid: parsed.pid, socket: String(parsed.socket), token: String(parsed.token) };
    }
  } catch {
    // fall through: an unparseable lock cannot name a live holder
  }
  return { pid: 0, socket: 'unknown', token: '' };
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
