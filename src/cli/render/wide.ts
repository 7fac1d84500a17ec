import { heldText, servicesSummary, summaryText, type Approval, type DaemonStatus, type Result, type Service, type ToolInfo } from '../../core/index.js';
import { clean, describeApproval, oneLine, showArg, showJson, table } from '../render.js';
import { statusText } from './daemon.js';

/** -o wide: the read commands' tables with more columns (full ids, origins, times). Cells are cleaned by table(). */

type Attempt = Result<'installs.list'>['attempts'][number];

function origin(o: Service['origin']): string {
  switch (o.kind) {
    case 'manual':
      return 'manual';
    case 'install':
      return `npm ${o.package}@${o.version}`;
    case 'source':
      return `${o.source}${o.plugin !== null ? ` (${o.plugin})` : ''} ${o.file}`;
    case 'import':
      return `imported ${o.file}`;
  }
}

// The cells mcp list and its -o wide share: here, so that `status` (which loads this file for -o wide) loads no other renderer.

/** The TOOLS cell: `9`, `9 (2 held)`, or `-` when not active. */
export function toolsCell(service: Service): string {
  const c = service.connection;
  if (c.status !== 'active') return '-';
  return service.heldTools > 0 ? `${c.toolCount} (${service.heldTools} held)` : String(c.toolCount);
}

/** The REASON cell: why it failed, where to log in, which tools wait for review. Cleaned by table(); one line, cut (mcp show NAME has it whole). */
export function reasonCell(service: Service, max: number): string {
  const c = service.connection;
  switch (c.status) {
    case 'failed':
      return oneLine(`${c.code}: ${c.message}`, max);
    case 'needs_auth':
      return `log in: wispctl mcp login ${service.name}${c.authorizationServer !== null ? ` (${c.authorizationServer})` : ''}`;
    case 'active':
      return service.heldTools > 0 ? heldText(service.heldTools, service.name) : '';
    default:
      return '';
  }
}

export function servicesWideTable(services: readonly Service[]): string {
  if (services.length === 0) return 'no services registered (add one with: wispctl mcp add NAME -- COMMAND [ARGS...])';
  const rows = table(
    ['NAME', 'ID', 'STATE', 'PID', 'TOOLS', 'SINCE', 'TRANSPORT', 'VERSION', 'ORIGIN', 'COMMAND OR URL', 'REASON'],
    services.map((s) => {
      const c = s.connection;
      const since = c.status === 'failed' || c.status === 'needs_auth' ? c.at : c.since;
      const target = s.transport === 'http' ? (s.url ?? '') : [s.command, ...s.args].map(showArg).join(' ');
      return [
        s.name,
        s.id,
        c.status === 'activating' ? `activating/${c.phase}` : c.status,
        'pid' in c && c.pid !== null ? String(c.pid) : '-',
        toolsCell(s),
        since,
        s.transport,
        String(s.configVersion),
        origin(s.origin),
        oneLine(target, 120),
        reasonCell(s, 120),
      ];
    }),
  );
  return `${rows}

${summaryText(servicesSummary(services))}`;
}

/** The argument names of a tool's input schema, required ones marked with `*`. */
function argumentNames(schema: Record<string, unknown>): string {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return '-';
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const names = Object.keys(properties).map((name) => (required.has(name) ? `${name}*` : name));
  return names.length === 0 ? '-' : oneLine(names.join(','), 80);
}

export function toolsWideTable(tools: readonly ToolInfo[]): string {
  if (tools.length === 0) return 'no active tools';
  return table(
    ['SERVICE', 'SERVICE ID', 'TOOL', 'MODEL NAME', 'TITLE', 'ARGUMENTS (* required)', 'HINTS', 'DESCRIPTION (from the server, untrusted)'],
    tools.map((t) => [
      t.serviceName,
      t.serviceId,
      showArg(t.name),
      t.modelName,
      t.title === null ? '-' : oneLine(t.title, 60),
      argumentNames(t.inputSchema),
      Object.entries(t.annotations ?? {})
        .filter(([k, v]) => k.endsWith('Hint') && v === true)
        .map(([k]) => k.replace(/Hint$/, ''))
        .join(',') || '-',
      oneLine(t.description, 160),
    ]),
  );
}

export function attemptsWideTable(attempts: readonly Attempt[]): string {
  if (attempts.length === 0) return 'no installs';
  return table(
    ['DIGEST', 'PACKAGE', 'STATUS', 'SERVICE', 'SERVICE ID', 'STARTED', 'ENDED', 'REGISTRY', 'DIRECTORY'],
    attempts.map((a) => [
      a.digest,
      `${a.package}@${a.version}`,
      a.status + (a.error !== null ? ` (${a.error.code})` : ''),
      a.serviceName ?? '-',
      a.serviceId ?? '-',
      a.startedAt,
      a.endedAt ?? '-',
      a.registry,
      showArg(a.directory),
    ]),
  );
}

export function statusWideText(status: DaemonStatus): string {
  return [
    statusText(status),
    `started:   ${clean(status.startedAt)} (run ${clean(status.runId)})`,
    `node:      ${clean(status.nodeVersion)}, protocol ${clean(status.protocolVersion)}`,
    `config:    ${clean(status.paths.configDir)}`,
    `runtime:   ${clean(status.paths.runtimeDir)}`,
    `registry:  ${clean(status.paths.registryFile)}`,
    `tools:     ${status.counts.activeTools} active`,
    `events:    last seq ${status.lastSeq}`,
    `you:       client ${clean(status.you.clientId)}`,
  ].join('\n');
}

/** An approval with what it is bound to, when it was asked and by which task. */
export function approvalsWideText(approvals: readonly Approval[]): string {
  if (approvals.length === 0) return 'no open approvals';
  return approvals
    .map((a) =>
      [
        describeApproval(a),
        `  created:    ${clean(a.createdAt)}`,
        ...(a.requester.taskId !== null ? [`  task:       ${clean(a.requester.taskId)}`] : []),
        `  bound to:   ${showJson(a.binding)}`,
      ].join('\n'),
    )
    .join('\n\n');
}
