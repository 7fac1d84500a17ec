import { constants, closeSync, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import path from 'node:path';
import { WispError } from '../core/index.js';

/**
 * The socket pointer: `<data dir>/wispd-socket.json`, `{"socket": "<path>", "pid": N}`,
 * written atomically (0600) by wispd once its socket listens and removed when it stops.
 *
 * Why: on Linux the socket is under $XDG_RUNTIME_DIR, which the MCP SDKs do not pass to the
 * servers they start (the TypeScript SDK passes HOME, LOGNAME, PATH, SHELL, TERM and USER;
 * the Python SDK HOME, PATH, SHELL and TERM). The data dir can be computed from HOME alone,
 * so a client that finds no socket where its own environment says, and was not told where
 * the socket is (--socket, WISP_SOCKET, WISP_RUNTIME_DIR), reads the pointer.
 *
 * It is trusted only as far as the socket itself would be: the data dir must be a real
 * directory of this user's that nobody else can enter (as wispd requires), the pointer a
 * regular file of this user's (not a symlink, one link, not writable by group or others),
 * and what it names a socket of this user's in a directory of this user's with mode 0700.
 * Anything else is refused (UNSAFE_FILE) with what is wrong, never followed. A pointer whose
 * socket is gone (wispd was killed) is left unused.
 *
 * Node built-ins only, synchronous: wispctl reads it before a command connects.
 */
export const POINTER_NAME = 'wispd-socket.json';

/** A pointer is a few hundred bytes; anything larger is not one of ours. */
const MAX_POINTER_BYTES = 4096;

export function pointerFile(dataDir: string): string {
  return path.join(dataDir, POINTER_NAME);
}

/** What wispd writes. */
export function pointerText(socket: string, pid: number): string {
  return `${JSON.stringify({ socket, pid })}\n`;
}

export interface PointerCheck {
  /** The uid everything must belong to (default: this process's). */
  readonly uid?: number;
  /** The longest socket path the platform allows, in bytes. */
  readonly maxSocketBytes: number;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function owner(stat: Stats, uid: number | undefined): string | undefined {
  return uid !== undefined && stat.uid !== uid ? `it belongs to uid ${stat.uid}, not to this user (uid ${uid})` : undefined;
}

function refuse(file: string, problem: string, fix: string): WispError {
  return new WispError('UNSAFE_FILE', `unsafe ${file}: ${problem}; refusing to use it to find the daemon's socket (${fix})`, { path: file, problem });
}

const FIX_POINTER = 'remove it, or name the socket with --socket or WISP_SOCKET; wispd writes it again when it starts';

/**
 * The socket the pointer in `dataDir` names, or undefined when there is no data dir, no
 * pointer, or its socket is gone. Throws UNSAFE_FILE when a check fails (see above).
 */
export function readSocketPointer(dataDir: string, check: PointerCheck): string | undefined {
  const uid = check.uid ?? process.getuid?.();
  const dir = lstatOrUndefined(dataDir);
  if (dir === undefined) return undefined;
  const dirProblem = dir.isSymbolicLink()
    ? 'it is a symlink'
    : !dir.isDirectory()
      ? 'it is not a directory'
      : (owner(dir, uid) ?? ((dir.mode & 0o077) !== 0 ? `it is open to group or others (mode ${octal(dir.mode)}); it must be private (0700)` : undefined));
  if (dirProblem !== undefined) throw refuse(dataDir, dirProblem, `wispd refuses it too: if it is yours, chmod 700 ${dataDir}; otherwise choose another --data-dir`);

  const file = pointerFile(dataDir);
  const text = readPointerFile(file, uid);
  if (text === undefined) return undefined;
  const socket = parsePointer(text);
  if (socket === undefined) throw refuse(file, 'it does not name a socket (an absolute path)', FIX_POINTER);
  if (Buffer.byteLength(socket) > check.maxSocketBytes) throw refuse(file, `the socket it names is over the ${check.maxSocketBytes}-byte limit`, FIX_POINTER);

  const found = lstatOrUndefined(socket);
  if (found === undefined) return undefined;
  const socketProblem = found.isSymbolicLink() ? 'is a symlink' : !found.isSocket() ? 'is not a socket' : owner(found, uid) !== undefined ? `belongs to uid ${found.uid}, not to this user` : undefined;
  if (socketProblem !== undefined) throw refuse(file, `what it names, ${socket}, ${socketProblem}`, FIX_POINTER);
  const parent = path.dirname(socket);
  const home = lstatOrUndefined(parent);
  const parentProblem =
    home === undefined || home.isSymbolicLink() || !home.isDirectory()
      ? 'is not a directory'
      : owner(home, uid) !== undefined
        ? `belongs to uid ${home.uid}, not to this user`
        : (home.mode & 0o777) !== 0o700
          ? `has mode ${octal(home.mode)}, not 0700`
          : undefined;
  if (parentProblem !== undefined) throw refuse(file, `the directory of the socket it names, ${parent}, ${parentProblem}`, FIX_POINTER);
  return socket;
}

/** The pointer's text, checked on the opened descriptor; undefined when there is none. */
function readPointerFile(file: string, uid: number | undefined): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'EMLINK') throw refuse(file, 'it is a symlink', FIX_POINTER);
    if (code === 'ENXIO') throw refuse(file, 'it is not a regular file', FIX_POINTER);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const problem = !stat.isFile()
      ? 'it is not a regular file'
      : (owner(stat, uid) ??
        ((stat.mode & 0o022) !== 0
          ? `it is writable by group or others (mode ${octal(stat.mode)})`
          : stat.nlink > 1
            ? `it has ${stat.nlink} hard links (another name points at the same file)`
            : stat.size > MAX_POINTER_BYTES
              ? `it is larger than ${MAX_POINTER_BYTES} bytes`
              : undefined));
    if (problem !== undefined) throw refuse(file, problem, FIX_POINTER);
    const buffer = Buffer.alloc(MAX_POINTER_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > MAX_POINTER_BYTES) throw refuse(file, `it is larger than ${MAX_POINTER_BYTES} bytes`, FIX_POINTER);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function parsePointer(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const socket = (parsed as Record<string, unknown>).socket;
  if (typeof socket !== 'string' || socket.includes('\0') || !path.isAbsolute(socket) || path.normalize(socket) !== socket) return undefined;
  return socket;
}
