import { lstatSync, type Stats } from 'node:fs';
import { WispClient } from '../control/client.js';
import { WispError } from '../core/index.js';

/** What is at a path, in a word, for the message below. */
function kindOf(stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a socket';
}

/** node:fs, not node:fs/promises: the latter loads readline's modules, which `wispctl status` does not (cli-startup.test.ts). */
function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * WispClient.connect, with one more thing said when it fails: a socket path with something
 * else there (a regular file or a directory given as --socket) is that, not "no daemon
 * answers". Its code is UNSAFE_DIRECTORY, the one wispd gives for the same path (something
 * that is not a socket is in the way), so it has one exit status (7) on both sides. Looked at
 * only after the connection failed: a working connection costs nothing more.
 */
export async function connectClient(socket: string): Promise<WispClient> {
  try {
    return await WispClient.connect(socket);
  } catch (error) {
    if (!(error instanceof WispError) || error.code !== 'DAEMON_NOT_RUNNING') throw error;
    const stats = lstatOrNull(socket);
    if (stats === null || stats.isSocket()) throw error;
    throw new WispError(
      'UNSAFE_DIRECTORY',
      `${socket} is ${kindOf(stats)}, not a socket: --socket (or WISP_SOCKET) must name the socket wispd listens on`,
      { socket },
    );
  }
}
