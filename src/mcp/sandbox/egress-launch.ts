import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The parts of a sandboxed launch that give a service its egress: what bwrap mounts (the
 * proxy's socket and the bridge script, read-only, at fixed paths inside) and the command
 * that runs the bridge in front of the server. The sandbox builder appends `bwrapArgs`
 * after its own mounts (a later mount covers an earlier one) and runs
 * `[...commandPrefix, command, ...args]`:
 *
 *     bwrap <its namespaces and mounts> --tmpfs /run ... <bwrapArgs> -- <commandPrefix> <command> <args...>
 *
 * `/run/wisp-egress` is created by bwrap as the mount point: `/run` must be one bwrap may
 * create directories in (its own root, or a `--tmpfs /run`), not a read-only bind of the
 * host's. The node that runs the bridge is this daemon's (bound at its own path: its
 * libraries come with the system's, which the sandbox binds anyway).
 */
export const EGRESS_SOCKET_INSIDE = '/run/wisp-egress/proxy.sock';
export const EGRESS_BRIDGE_INSIDE = '/run/wisp-egress/bridge.mjs';

export interface EgressSandboxParts {
  readonly bwrapArgs: readonly string[];
  readonly commandPrefix: readonly string[];
}

export interface EgressSandboxOptions {
  /** The proxy's socket on the host (EgressProxy.socketPath). */
  readonly socketPath: string;
  /** The node binary that runs the bridge (default: this process's). */
  readonly nodePath?: string;
  /** NO_PROXY inside (default: the namespace's own loopback, `localhost,127.0.0.1,::1`). */
  readonly noProxy?: string;
  /** The bridge script (default: egressBridgeFile(); tests that load src/ name dist's). */
  readonly bridgeFile?: string;
}

/** The bridge script as built (dist/mcp/sandbox/egress-bridge.mjs, beside this module). */
export function egressBridgeFile(): string {
  return fileURLToPath(new URL('./egress-bridge.mjs', import.meta.url));
}

export function egressSandboxParts(options: EgressSandboxOptions): EgressSandboxParts {
  const node = realpathSync(options.nodePath ?? process.execPath);
  return {
    bwrapArgs: ['--ro-bind', options.socketPath, EGRESS_SOCKET_INSIDE, '--ro-bind', options.bridgeFile ?? egressBridgeFile(), EGRESS_BRIDGE_INSIDE, '--ro-bind', node, node],
    commandPrefix: [node, EGRESS_BRIDGE_INSIDE, '--socket', EGRESS_SOCKET_INSIDE, ...(options.noProxy !== undefined ? ['--no-proxy', options.noProxy] : []), '--'],
  };
}
