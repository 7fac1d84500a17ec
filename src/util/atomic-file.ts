import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

const TEMP_SUFFIX = '.tmp';

function tempPrefix(target: string): string {
  return `.${path.basename(target)}.`;
}

/**
 * Replaces `target` with `data` so that a crash at any instant leaves either the old
 * file or the new one, never a mix: temp file (exclusive create) -> write -> fsync ->
 * rename -> fsync the directory. `write-file-atomic` skips the directory fsync, which is
 * what makes the rename itself durable, so we keep our own.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `${tempPrefix(target)}${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await fs.open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await fsyncDirectory(dir);
}

export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes temp files a killed writer of `target` left behind. Returns the names removed. */
export async function sweepTempFiles(target: string): Promise<string[]> {
  const dir = path.dirname(target);
  const prefix = tempPrefix(target);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX)) {
      await fs.rm(path.join(dir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}
