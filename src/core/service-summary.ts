import type { ConnectionState } from './wire/shapes.js';
import type { ServicesSummary, StartupPhase } from './wire/status-shapes.js';
import { assertNever } from './assert-never.js';
import { clean } from './visible-text.js';

export type { ServicesSummary, StartupPhase };

/** What the summary reads of a service: services.list's view has it all (heldTools is absent from older daemons' views). */
export interface SummarizedService {
  readonly name: string;
  readonly connection: ConnectionState;
  readonly heldTools?: number;
}

/**
 * The status panel at a glance (seed 002's /mcp shows the initialization phase and the
 * connection count): how many services are connected (active) of those registered, where
 * starting them stands, and which hold tools for review. The one computation behind
 * daemon.status, `wispctl status`, `wispctl mcp list` and the panel's Services page.
 *
 * The phase looks at the services started or starting (a disabled or stopping one is not
 * being started): idle when there are none, starting while any is activating, then ready
 * when every one is active, some_failed when any failed or waits for a login.
 */
export function servicesSummary(services: readonly SummarizedService[]): ServicesSummary {
  let connected = 0;
  let activating = 0;
  let failed = 0;
  let needsAuth = 0;
  const held: { service: string; tools: number }[] = [];
  for (const service of services) {
    const status = service.connection.status;
    if (status === 'active') connected += 1;
    else if (status === 'activating') activating += 1;
    else if (status === 'failed') failed += 1;
    else if (status === 'needs_auth') needsAuth += 1;
    // Only an active service's held tools are there to review (0 otherwise, from the daemon too).
    const tools = status === 'active' ? (service.heldTools ?? 0) : 0;
    if (tools > 0) held.push({ service: service.name, tools });
  }
  const of = connected + activating + failed + needsAuth;
  return { total: services.length, connected, phase: phaseOf(of, connected, activating, failed, needsAuth), held };
}

function phaseOf(of: number, active: number, activating: number, failed: number, needsAuth: number): StartupPhase {
  if (of === 0) return { status: 'idle' };
  if (activating > 0) return { status: 'starting', active, of, failed: failed + needsAuth };
  if (failed + needsAuth > 0) return { status: 'some_failed', failed, needsAuth, of };
  return { status: 'ready' };
}

/** The phase in words: `starting 2 of 5`, `ready`, `some failed (1 of 3)`, `1 waiting for a login: ...`. */
export function phaseText(phase: StartupPhase): string {
  switch (phase.status) {
    case 'idle':
      return 'idle (no service started)';
    case 'starting':
      return `starting ${phase.active} of ${phase.of}${phase.failed > 0 ? ` (${phase.failed} failed)` : ''}`;
    case 'ready':
      return 'ready';
    case 'some_failed': {
      const login = phase.needsAuth > 0 ? `${phase.needsAuth} waiting for a login: wispctl mcp login NAME` : '';
      if (phase.failed === 0) return login;
      return `some failed (${phase.failed} of ${phase.of}${login !== '' ? `; ${login}` : ''})`;
    }
    default:
      return assertNever(phase);
  }
}

/** The connection count and the phase on one line: `2 of 5 connected; starting 2 of 3`. */
export function summaryText(summary: ServicesSummary): string {
  return `${summary.connected} of ${summary.total} connected; ${phaseText(summary.phase)}`;
}

/** One service's held tools and how to review them: `2 held for review: wispctl mcp review notes`. */
export function heldText(count: number, serviceName: string): string {
  return `${count} held for review: wispctl mcp review ${clean(serviceName)}`;
}

/** Every held tool of the summary, or null when none: `3 tools held for review: wispctl mcp review notes, wispctl mcp review web`. */
export function heldSummaryText(summary: ServicesSummary): string | null {
  if (summary.held.length === 0) return null;
  const count = summary.held.reduce((sum, h) => sum + h.tools, 0);
  return `${count} tool${count === 1 ? '' : 's'} held for review: ${summary.held.map((h) => `wispctl mcp review ${clean(h.service)}`).join(', ')}`;
}

/** How many of a failed service's last stderr lines are shown where it failed, and how long each may be. */
export const FAILURE_TAIL_LINES = 20;
export const FAILURE_TAIL_LINE_CHARS = 400;

/**
 * The last lines a server wrote to stderr (services.logs, already redacted by the daemon),
 * for where an activation failed (wispctl mcp activate and show, the panel): at most
 * FAILURE_TAIL_LINES, each cut at FAILURE_TAIL_LINE_CHARS; blank lines at the end dropped.
 * Not cleaned: each front-end shows them through its own escaping.
 */
export function failureTail(stderr: string): string[] {
  const lines = stderr.replace(/\s+$/, '').split(/\r?\n/);
  if (lines.length === 1 && lines[0] === '') return [];
  return lines.slice(-FAILURE_TAIL_LINES).map((l) => (l.length > FAILURE_TAIL_LINE_CHARS ? `${l.slice(0, FAILURE_TAIL_LINE_CHARS)}…` : l));
}

/** The command that follows a service's stderr. */
export function followLogHint(name: string): string {
  return `wispctl mcp logs ${name} -f`;
}
