import { heldSummaryText, phaseText, type DaemonStatus } from '../../core/index.js';
import { clean, cleanBlock, formatDuration, showArg } from '../render.js';

/** The daemon: `wispctl status` and `wispctl daemon status`. */

export function statusText(status: DaemonStatus): string {
  const lines = [
    `wispd ${status.version} running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)})`,
    `socket:    ${clean(status.paths.socket)}`,
    `data dir:  ${clean(status.paths.dataDir)}`,
    `services:  ${status.counts.services} (${status.counts.enabledServices} enabled)`,
  ];
  // A daemon older than this wispctl has no summary to show.
  const summary = (status as Partial<DaemonStatus>).services;
  if (summary !== undefined) {
    lines.push(`connected: ${summary.connected} of ${summary.total}`, `phase:     ${phaseText(summary.phase)}`);
    const held = heldSummaryText(summary);
    if (held !== null) lines.push(`held:      ${held}`);
  }
  lines.push(`clients:   ${status.counts.clients} (${status.counts.subscribers} following events)`);
  if (status.registryLoadError !== null) {
    lines.push(
      `warning:   mcp-servers.json was unreadable at start (${clean(status.registryLoadError.message)}); it was moved to ${clean(status.registryLoadError.movedTo)}`,
    );
  }
  // A daemon older than this wispctl does not say.
  for (const problem of (status as Partial<DaemonStatus>).sourceProblems ?? []) {
    lines.push(`warning:   config source skipped (${clean(problem.code)}): ${showArg(problem.file)}: ${cleanBlock(problem.message, '  ')}; its services are kept as they were (wispctl mcp sources)`);
  }
  return lines.join('\n');
}

export function daemonStatusText(status: DaemonStatus | null, socket: string, plan: { manager: string; file: string }, installed: boolean): string {
  return [
    status !== null ? `running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)}, socket ${clean(socket)})` : `not running (socket ${clean(socket)})`,
    installed ? `installed as a ${plan.manager} user service: ${clean(plan.file)}` : `not installed as a ${plan.manager} user service (wispctl daemon install)`,
  ].join('\n');
}

export function startedText(result: { alreadyRunning: boolean; pid: number; socket: string; logFile: string | null }): string {
  return result.alreadyRunning
    ? `wispd is already running (pid ${result.pid}, socket ${clean(result.socket)})`
    : `wispd started (pid ${result.pid}, socket ${clean(result.socket)}, log ${clean(String(result.logFile))})`;
}

function commandLine(argv: readonly string[]): string {
  return argv.map(showArg).join(' ');
}

export function installDryRunText(plan: { file: string; content: string; directories: readonly string[]; install: readonly (readonly string[])[] }): string {
  return [
    ...plan.directories.map((dir) => `would make ${clean(dir)} (if missing, 0700)`),
    `would write ${clean(plan.file)}:`,
    cleanBlock(plan.content),
    'would run:',
    ...plan.install.map((c) => `  ${commandLine(c)}`),
  ].join('\n');
}

export function uninstallDryRunText(plan: { file: string; uninstall: readonly (readonly string[])[] }): string {
  return ['would run:', ...plan.uninstall.map((c) => `  ${commandLine(c)}`), `would remove ${clean(plan.file)}`].join('\n');
}

/** `wrote FILE`, `removed FILE`. */
export function fileDone(what: string, file: string): string {
  return `${what} ${clean(file)}`;
}

/** A service-manager command that ran, and what it said. */
export function ranText(argv: readonly string[], outcome: { ok: boolean; output: string }): string {
  return `ran: ${commandLine(argv)} -> ${outcome.ok ? 'ok' : 'failed'}${outcome.output !== '' ? `\n${cleanBlock(outcome.output)}` : ''}`;
}

export function commandFailedText(argv: readonly string[]): string {
  return `${commandLine(argv)} failed; run it yourself to see why`;
}
