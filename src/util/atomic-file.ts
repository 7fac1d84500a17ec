import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
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
  // A fresh name, created exclusively and never through a symlink: nothing planted is written to.
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
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
  const handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Removes temp files a killed writer of `target` left behind: only names of our own pattern
 * (`.<basename>.<pid>.<hex>.tmp`), only in `target`'s directory. Returns the names removed.
 */
export async function sweepTempFiles(target: string): Promise<string[]> {
  const dir = path.dirname(target);
  const prefix = tempPrefix(target);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (isTempName(name, prefix)) {
      await fs.rm(path.join(dir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}

const TEMP_TAIL = /^\d+\.[0-9a-f]{12}\.tmp$/;

function isTempName(name: string, prefix: string): boolean {
  return name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX) && TEMP_TAIL.test(name.slice(prefix.length));
}

/**
 * Removes, in `dir`, temp files that any killed atomic writer left there (every target in
 * that directory): `.<name>.<pid>.<12 hex>.tmp`. For folders of records written atomically.
 */
export async function sweepTempFilesIn(dir: string): Promise<string[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const match = /^\.(.+)\.\d+\.[0-9a-f]{12}\.tmp$/.exec(name);
    if (match?.[1] !== undefined && isTempName(name, tempPrefix(match[1]))) {
      await fs.rm(path.join(dir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}
