import type { DaemonStatus } from '../../core/index.js';
import { clean, formatDuration } from '../render.js';

/** The daemon: `wispctl status` and `wispctl daemon status`. */

export function statusText(status: DaemonStatus): string {
  const lines = [
    `wispd ${status.version} running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)})`,
    `socket:    ${clean(status.paths.socket)}`,
    `data dir:  ${clean(status.paths.dataDir)}`,
    `services:  ${status.counts.services} (${status.counts.enabledServices} enabled)`,
    `clients:   ${status.counts.clients} (${status.counts.subscribers} following events)`,
  ];
  if (status.registryLoadError !== null) {
    lines.push(
      `warning:   mcp-servers.json was unreadable at start (${clean(status.registryLoadError.message)}); it was moved to ${clean(status.registryLoadError.movedTo)}`,
    );
  }
  return lines.join('\n');
}

export function daemonStatusText(status: DaemonStatus | null, socket: string, plan: { manager: string; file: string }, installed: boolean): string {
  return [
    status !== null ? `running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)}, socket ${clean(socket)})` : `not running (socket ${clean(socket)})`,
    installed ? `installed as a ${plan.manager} user service: ${clean(plan.file)}` : `not installed as a ${plan.manager} user service (wispctl daemon install)`,
  ].join('\n');
}
