import { promises as fs } from 'node:fs';
import net from 'node:net';
import { WispError } from '../core/index.js';
import { checkDirectory, checkEntries, checkEntry } from '../util/index.js';
import path from 'node:path';
import type { WispPaths } from '../control/index.js';

/**
 * Creates `dir` (and parents) 0700, or checks the one that is there: a real directory (not
 * a symlink) owned by this user that nobody else can enter. A private directory is what
 * shuts other users out of the socket and the data: Node cannot create a socket with a
 * mode. An existing directory is never chmod-ed (it may be shared, like /tmp or a home):
 * one that is not private is refused (UNSAFE_FILE) with how to fix it.
 */
export async function ensurePrivateDir(dir: string, option: string): Promise<void> {
  await checkDirectory(dir, { create: true, private: true, fix: `if it is yours and holds nothing shared, chmod 700 ${dir}; otherwise choose another ${option}`, elsewhere: `choose another ${option}` });
}

/**
 * At start: every file and directory the daemon will read, write or append to is its
 * user's own, not writable by group or others, and not a symlink (UNSAFE_FILE otherwise,
 * naming it). The data dir is all ours, so everything directly in it and in its record
 * folders is checked; in the runtime dir (which may be shared with other things) only our
 * own entries. Config sources are checked as they are read. Files are checked again
 * whenever they are opened (util/safe-file.ts).
 */
export async function checkOwnFiles(paths: WispPaths): Promise<void> {
  await checkEntries(paths.dataDir);
  for (const folder of ['sessions', 'mcp-installs', 'npm-sandbox']) await checkEntries(path.join(paths.dataDir, folder));
  for (const entry of [paths.socket, `${paths.socket}.lock`, serverRecordsFile(paths)]) await checkEntry(entry);
}

/** Where the running MCP servers are recorded for crash recovery: beside the socket. */
export function serverRecordsFile(paths: WispPaths): string {
  return `${paths.socket}.servers.json`;
}

/**
 * Called with the instance lock held: a socket file that nothing answers on is left over
 * from a crash and is removed. Something answering means another server owns it.
 */
export async function clearStaleSocket(socketPath: string): Promise<void> {
  const stat = await fs.lstat(socketPath).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (stat === undefined) return;
  if (!stat.isSocket()) {
    throw new WispError('UNSAFE_DIRECTORY', `${socketPath} exists and is not a socket; refusing to replace it`, { path: socketPath });
  }
  const answers = await new Promise<boolean>((resolve) => {
    const probe = net.createConnection(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (answers) {
    throw new WispError('ALREADY_RUNNING', `another server is already listening on ${socketPath}`, { socket: socketPath });
  }
  await fs.rm(socketPath, { force: true });
}
