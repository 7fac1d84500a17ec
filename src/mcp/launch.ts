import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispError } from '../core/index.js';

/**
 * Resolves a service's command the way the daemon will run it. A bare name is looked up on
 * the daemon's own PATH, which under launchd/systemd is not the user's terminal PATH, so
 * every failure says to use an absolute path.
 */
export async function resolveCommand(command: string, searchPath: string | undefined): Promise<string> {
  if (path.isAbsolute(command)) {
    await assertExecutable(command);
    return command;
  }
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  throw new WispError(
    'COMMAND_NOT_FOUND',
    // What matters first: a table cuts the long PATH at the end (wispctl mcp show has it whole).
    `${command} was not found on the daemon's PATH; register it by its absolute path (the daemon's PATH: ${searchPath ?? 'unset'})`,
    { command },
  );
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return false;
    await fs.access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function assertExecutable(file: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch {
    throw new WispError('COMMAND_NOT_FOUND', `${file} does not exist`, { command: file });
  }
  if (!stat.isFile()) throw new WispError('COMMAND_NOT_EXECUTABLE', `${file} is not a regular file`, { command: file });
  try {
    await fs.access(file, constants.X_OK);
  } catch {
    throw new WispError('COMMAND_NOT_EXECUTABLE', `${file} is not executable (chmod +x, or run it through its interpreter)`, { command: file });
  }
}

export async function checkCwd(cwd: string | null): Promise<void> {
  if (cwd === null) return;
  const stat = await fs.stat(cwd).catch(() => undefined);
  if (stat === undefined) throw new WispError('CWD_NOT_FOUND', `the working directory ${cwd} does not exist`, { cwd });
  if (!stat.isDirectory()) throw new WispError('CWD_NOT_FOUND', `the working directory ${cwd} is not a directory`, { cwd });
}

/**
 * The complete environment of a server: the SDK's minimal inherited set (HOME, LOGNAME,
 * PATH, SHELL, TERM, USER) plus the service's own variables. Never the daemon's full
 * environment, never the model API key, never another service's secrets.
 */
export function childEnvironment(own: Readonly<Record<string, string>>): Record<string, string> {
  return { ...getDefaultEnvironment(), ...own };
}
