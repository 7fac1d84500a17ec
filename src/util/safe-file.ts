import { constants, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { WispError } from '../core/index.js';

/**
 * Only our own files are trusted. Every file and directory the daemon reads, writes or
 * appends to is opened here: never through a symlink (O_NOFOLLOW), never blocking on a
 * planted FIFO (O_NONBLOCK), and checked on the opened descriptor (fstat, so there is no
 * window between the check and the use): it must be a regular file owned by this user and
 * not writable by group or others. Anything else is refused with UNSAFE_FILE, naming the
 * path and what is wrong, and nothing is read from it or written to it.
 */

export type OpenMode = 'read' | 'append' | 'write' | 'create';

const FLAGS: Record<OpenMode, number> = {
  read: constants.O_RDONLY,
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
  write: constants.O_WRONLY | constants.O_TRUNC | constants.O_CREAT,
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
};

const NOFOLLOW = constants.O_NOFOLLOW;
const NONBLOCK = constants.O_NONBLOCK;

/** The refusal, with a hint how to fix it. `what` is "file" or "directory". */
export function unsafeFile(file: string, problem: string, fix = 'fix or remove it, then try again'): WispError {
  return new WispError('UNSAFE_FILE', `unsafe ${file}: ${problem}; nothing was read from it or written to it (${fix})`, { path: file, problem });
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

function currentUid(): number | undefined {
  return process.getuid?.();
}

/** What is wrong with a file the daemon uses, or undefined when it is ours and safe. */
export function fileProblem(stat: Stats, options: { readonly singleLink?: boolean } = {}): string | undefined {
  if (stat.isSymbolicLink()) return 'it is a symlink';
  if (!stat.isFile()) return 'it is not a regular file';
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if ((stat.mode & 0o022) !== 0) return `it is writable by group or others (mode ${octal(stat.mode)})`;
  // A hard link to a file of ours elsewhere would make us write into that file.
  if (options.singleLink === true && stat.nlink > 1) return `it has ${stat.nlink} hard links (another name points at the same file)`;
  return undefined;
}

/** What is wrong with a directory the daemon uses, or undefined. `private`: nobody else may even enter it. */
export function directoryProblem(stat: Stats, options: { readonly private?: boolean } = {}): string | undefined {
  if (stat.isSymbolicLink()) return 'it is a symlink';
  if (!stat.isDirectory()) return 'it is not a directory';
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if (options.private === true && (stat.mode & 0o077) !== 0) return `it is open to group or others (mode ${octal(stat.mode)}); it must be private (0700)`;
  if ((stat.mode & 0o022) !== 0) return `it is writable by group or others (mode ${octal(stat.mode)})`;
  return undefined;
}

/**
 * Opens `file` for `mode` without following a symlink, then checks the descriptor. New
 * files are created with `perm` (0600). Errors other than the refusal (ENOENT, EEXIST...)
 * are passed on unchanged, so callers keep their own handling of a missing file.
 */
export async function openSafe(file: string, mode: OpenMode, perm = 0o600): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, FLAGS[mode] | NOFOLLOW | NONBLOCK, perm);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a symlink: ELOOP (Linux, macOS); EMLINK on some BSDs. ENXIO: a FIFO with no reader.
    if (code === 'ELOOP' || code === 'EMLINK') throw unsafeFile(file, 'it is a symlink');
    if (code === 'ENXIO') throw unsafeFile(file, 'it is not a regular file');
    throw error;
  }
  try {
    const problem = fileProblem(await handle.stat(), { singleLink: mode !== 'read' });
    if (problem !== undefined) throw unsafeFile(file, problem);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Reads a whole file of ours as UTF-8 (ENOENT passes through). `maxBytes`: refuse a larger one. */
export async function readSafe(file: string, maxBytes?: number): Promise<string> {
  const handle = await openSafe(file, 'read');
  try {
    if (maxBytes !== undefined) {
      const { size } = await handle.stat();
      if (size > maxBytes) throw new WispError('LIMIT_EXCEEDED', `${file} is larger than ${maxBytes} bytes`, { path: file, max: maxBytes });
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Replaces the contents of a file of ours (not atomic: for files nothing reads back as state). */
export async function writeSafe(file: string, data: string | Uint8Array): Promise<void> {
  const handle = await openSafe(file, 'write');
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Appends to a file of ours, creating it 0600. */
export async function appendSafe(file: string, data: string | Uint8Array): Promise<void> {
  const handle = await openSafe(file, 'append');
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

export interface DirectoryOptions {
  /** Create it (0700, with any missing parents) when it does not exist. Otherwise a missing one is reported as absent. */
  readonly create?: boolean;
  /** Nobody else may read or enter it (data dir, runtime dir). Otherwise: not writable by group or others. */
  readonly private?: boolean;
  /** Said in the refusal: how to fix it. */
  readonly fix?: string;
  /** Said when it is not this user's (no chmod of ours can fix that): the way around it, `choose another --data-dir`. */
  readonly elsewhere?: string;
}

/**
 * Checks a directory the daemon uses (never following a symlink). A directory it creates
 * is created 0700; one that already exists is never chmod-ed: if it is not safe it is
 * refused, with how to fix it. Returns what it found.
 */
export async function checkDirectory(dir: string, options: DirectoryOptions = {}): Promise<'created' | 'existing' | 'absent'> {
  let created = false;
  if (options.create === true) {
    try {
      await fs.mkdir(dir, { mode: 0o700 });
      created = true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        await fs.mkdir(dir, { recursive: true, mode: 0o700 });
        created = true;
      } else if (code !== 'EEXIST') throw error;
    }
  }
  let stat: Stats;
  try {
    stat = await fs.lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && options.create !== true) return 'absent';
    throw error;
  }
  const problem = directoryProblem(stat, { private: options.private === true });
  if (problem === undefined && options.private === true) await checkAncestors(dir);
  if (problem !== undefined) {
    const realDirectory = stat.isDirectory() && !stat.isSymbolicLink();
    const uid = currentUid();
    // Another user's (made before this user's daemon ever ran): only its owner or root can remove it.
    const theirs = uid !== undefined && stat.uid !== uid;
    const fix = theirs
      ? `another user made it, so it is not yours to change: have its owner (uid ${stat.uid}) or root remove it, or ${options.elsewhere ?? 'choose another directory'}`
      : realDirectory
        ? (options.fix ?? `if it is yours, make it private: chmod 700 ${dir}`)
        : 'remove it or choose another directory';
    throw unsafeFile(dir, problem, fix);
  }
  return created ? 'created' : 'existing';
}

/**
 * The directories above a private one: if another user could rename or replace a path
 * component, the checks on the directory itself would mean nothing. Each ancestor must be
 * owned by this user or by root, and not writable by others unless sticky (like /tmp,
 * where only an entry's owner may rename it). Symlinked ancestors (/tmp on macOS) are
 * followed: it is the directory they lead to that must hold.
 */
async function checkAncestors(dir: string): Promise<void> {
  const uid = currentUid();
  if (uid === undefined) return;
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    const stat = await fs.stat(parent);
    if (stat.uid !== uid && stat.uid !== 0) {
      throw unsafeFile(dir, `its parent ${parent} belongs to uid ${stat.uid}, who could replace it`, 'choose a directory under one of your own or a system directory');
    }
    if ((stat.mode & 0o002) !== 0 && (stat.mode & 0o1000) === 0) {
      throw unsafeFile(dir, `its parent ${parent} is writable by everyone and not sticky (mode ${octal(stat.mode)}), so anyone could replace it`, 'choose another directory');
    }
    if (path.dirname(parent) === parent) return;
  }
}

/** Checks an entry of ours if it exists (a file, a directory or our socket), without opening it. */
export async function checkEntry(entry: string): Promise<void> {
  let stat: Stats;
  try {
    stat = await fs.lstat(entry);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  let problem: string | undefined;
  if (stat.isDirectory()) problem = directoryProblem(stat);
  else if (stat.isSocket()) problem = socketProblem(stat);
  else problem = fileProblem(stat, { singleLink: true });
  if (problem !== undefined) throw unsafeFile(entry, problem);
}

function socketProblem(stat: Stats): string | undefined {
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  return undefined;
}

/** Checks every entry directly in `dir` (not deeper): for the data dir and its record folders at start. */
export async function checkEntries(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names.sort()) await checkEntry(path.join(dir, name));
}
