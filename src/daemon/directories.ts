import { promises as fs } from 'node:fs';
import net from 'node:net';
import { WispError } from '../control/index.js';

/**
 * Creates `dir` (and parents) and makes sure it is a real directory owned by this user
 * with mode 0700. A private directory is what shuts other users out of the socket: Node
 * cannot create a socket with a mode, so this avoids a chmod race.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stat = await fs.lstat(dir);
  if (!stat.isDirectory()) {
    throw new WispError('UNSAFE_DIRECTORY', `${dir} is not a directory (a symlink or file is in the way)`, { path: dir });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new WispError('UNSAFE_DIRECTORY', `${dir} belongs to uid ${stat.uid}, not to this user (uid ${uid})`, { path: dir });
  }
  if ((stat.mode & 0o777) !== 0o700) await fs.chmod(dir, 0o700);
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
