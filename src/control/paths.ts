import { lstatSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WispError } from '../core/index.js';
import { readSocketPointer } from './socket-pointer.js';

export { POINTER_NAME, pointerFile, pointerText, readSocketPointer, type PointerCheck } from './socket-pointer.js';

/** Where a daemon keeps its data and its socket. Shared by wispd and every client. */
export interface WispPaths {
  readonly dataDir: string;
  /** Config sources: settings.json (global mcpServers) and plugins/. */
  readonly configDir: string;
  readonly runtimeDir: string;
  readonly socket: string;
}

export interface PathInputs {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  readonly homedir?: string;
  readonly dataDir?: string;
  readonly runtimeDir?: string;
  readonly configDir?: string;
  readonly socket?: string;
}

export const SOCKET_NAME = 'wispd.sock';

/**
 * Resolution order:
 * - data dir: `dataDir` (--data-dir) > WISP_HOME > macOS ~/Library/Application Support/Wisp,
 *   elsewhere $XDG_DATA_HOME/wisp or ~/.local/share/wisp. A --data-dir or WISP_HOME that is
 *   the default data dir itself is no override: it resolves what no flag resolves.
 * - runtime dir: `runtimeDir` > WISP_RUNTIME_DIR > (when the data dir was overridden) <data>/run,
 *   so an overridden home is a separate instance > $XDG_RUNTIME_DIR/wisp > <data>/run.
 * - config dir: `configDir` (--config-dir) > WISP_CONFIG_HOME > (when the data dir was
 *   overridden) <data>/config > $XDG_CONFIG_HOME/wisp > ~/.config/wisp (macOS too).
 * - socket: `socket` (--socket) > WISP_SOCKET > <runtime>/wispd.sock.
 */
export function resolvePaths(inputs: PathInputs = {}): WispPaths {
  const env = inputs.env ?? process.env;
  const platform = inputs.platform ?? process.platform;
  const home = inputs.homedir ?? os.homedir();
  const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

  let defaultDataDir: string;
  if (platform === 'darwin') defaultDataDir = path.join(home, 'Library', 'Application Support', 'Wisp');
  else {
    const xdgData = nonEmpty(env.XDG_DATA_HOME);
    defaultDataDir = xdgData !== undefined && path.isAbsolute(xdgData) ? path.join(xdgData, 'wisp') : path.join(home, '.local', 'share', 'wisp');
  }
  const given = nonEmpty(inputs.dataDir) ?? nonEmpty(env.WISP_HOME);
  // `wispctl --data-dir <the data dir status prints>` must find the same daemon as no flag.
  const dataOverride = given !== undefined && path.resolve(given) !== path.resolve(defaultDataDir) ? given : undefined;
  const dataDir = dataOverride !== undefined ? path.resolve(dataOverride) : path.resolve(defaultDataDir);

  const runtimeOverride = nonEmpty(inputs.runtimeDir) ?? nonEmpty(env.WISP_RUNTIME_DIR);
  const xdgRuntime = nonEmpty(env.XDG_RUNTIME_DIR);
  let runtimeDir: string;
  if (runtimeOverride !== undefined) runtimeDir = path.resolve(runtimeOverride);
  else if (dataOverride === undefined && xdgRuntime !== undefined && path.isAbsolute(xdgRuntime)) runtimeDir = path.join(xdgRuntime, 'wisp');
  else runtimeDir = path.join(dataDir, 'run');

  const configOverride = nonEmpty(inputs.configDir) ?? nonEmpty(env.WISP_CONFIG_HOME);
  const xdgConfig = nonEmpty(env.XDG_CONFIG_HOME);
  let configDir: string;
  if (configOverride !== undefined) configDir = path.resolve(configOverride);
  else if (dataOverride !== undefined) configDir = path.join(dataDir, 'config');
  else if (xdgConfig !== undefined && path.isAbsolute(xdgConfig)) configDir = path.join(xdgConfig, 'wisp');
  else configDir = path.join(home, '.config', 'wisp');

  const socketOverride = nonEmpty(inputs.socket) ?? nonEmpty(env.WISP_SOCKET);
  const socket = socketOverride !== undefined ? path.resolve(socketOverride) : path.join(runtimeDir, SOCKET_NAME);
  return { dataDir, configDir, runtimeDir: socketOverride !== undefined ? path.dirname(socket) : runtimeDir, socket };
}

/**
 * What a client connects to: resolvePaths, and when nothing is at the resolved socket and
 * the socket was not named (--socket, WISP_SOCKET, --runtime-dir, WISP_RUNTIME_DIR), the
 * socket the running daemon's pointer in the data dir names (socket-pointer.ts), if it
 * passes the checks there (UNSAFE_FILE if it does not). This is how a client started with
 * only HOME and PATH (as MCP clients start their servers) finds a daemon whose socket is
 * under $XDG_RUNTIME_DIR.
 */
export function locatePaths(inputs: PathInputs = {}): WispPaths {
  const paths = resolvePaths(inputs);
  const env = inputs.env ?? process.env;
  const named = [inputs.socket, env.WISP_SOCKET, inputs.runtimeDir, env.WISP_RUNTIME_DIR].some((value) => value !== undefined && value !== '');
  if (named || socketAt(paths.socket)) return paths;
  const pointed = readSocketPointer(paths.dataDir, { maxSocketBytes: maxSocketPathBytes(inputs.platform) });
  return pointed === undefined ? paths : { ...paths, runtimeDir: path.dirname(pointed), socket: pointed };
}

function socketAt(file: string): boolean {
  try {
    return lstatSync(file).isSocket();
  } catch {
    return false;
  }
}

/** Longest socket path, in bytes: sun_path is 108 bytes on Linux and 104 on macOS, NUL included. */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === 'linux' ? 107 : 103;
}

/** Node would silently truncate a longer path on Linux; refuse it with a clear error instead. */
export function checkSocketPath(socket: string, platform: NodeJS.Platform = process.platform): void {
  const bytes = Buffer.byteLength(socket);
  const max = maxSocketPathBytes(platform);
  if (bytes > max) {
    throw new WispError(
      'PATH_TOO_LONG',
      `socket path is ${bytes} bytes, over the ${max}-byte limit on ${platform}: ${socket} (use a shorter --data-dir, --runtime-dir or --socket)`,
      { path: socket, bytes, max },
    );
  }
}
