import os from 'node:os';
import path from 'node:path';
import { WispError } from '../core/index.js';

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
 *   elsewhere $XDG_DATA_HOME/wisp or ~/.local/share/wisp.
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

  const dataOverride = nonEmpty(inputs.dataDir) ?? nonEmpty(env.WISP_HOME);
  let dataDir: string;
  if (dataOverride !== undefined) dataDir = path.resolve(dataOverride);
  else if (platform === 'darwin') dataDir = path.join(home, 'Library', 'Application Support', 'Wisp');
  else {
    const xdgData = nonEmpty(env.XDG_DATA_HOME);
    dataDir = xdgData !== undefined && path.isAbsolute(xdgData) ? path.join(xdgData, 'wisp') : path.join(home, '.local', 'share', 'wisp');
  }

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
