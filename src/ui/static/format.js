// The words of the panel: the same as wispctl's where it has them (src/cli/render*.ts).
// Everything here returns plain strings; the pages render them as text, never as HTML, and
// every text they render passes wispctl's escaping (html.js); one-line fields of an approval
// are escaped here with clean() as wispctl escapes them, so a line break in a name shows too.
import { clean, cleanLines, heldText, jsonForTerminal, unseenIn } from '../../core/index.js';

/** `9 tools`, and when some are held: `9 tools, 2 held for review: wispctl mcp review NAME` (wispctl's toolsText). */
export function toolsText(toolCount, heldTools, name) {
  return `${toolCount} tool${toolCount === 1 ? '' : 's'}${heldTools > 0 ? `, ${heldText(heldTools, name)}` : ''}`;
}

/**
 * A connection state on one line, as `wispctl mcp show` describes it. With the service (its
 * transport, name, held tools) it says where it runs and what waits for review; an event's
 * state alone says neither. A stdio service without a pid (the demo's) is never "remote".
 */
export function describeConnection(c, service) {
  switch (c.status) {
    case 'disabled':
      return 'disabled';
    case 'activating':
      return `activating (${clean(String(c.phase))}${c.pid !== null ? `, pid ${c.pid}` : ''})`;
    case 'active': {
      const where = c.pid !== null ? `pid ${c.pid}, ` : service !== undefined && service.transport !== 'stdio' ? 'remote, ' : '';
      return `active (${where}${toolsText(c.toolCount, service?.heldTools ?? 0, service?.name ?? '')})`;
    }
    case 'failed':
      return `failed ${clean(c.code)}: ${clean(c.message)}`;
    case 'needs_auth':
      return `needs_auth: ${clean(c.message)} (log in below, or wispctl mcp login NAME)`;
    case 'stopping':
      return 'stopping';
    default:
      return clean(String(c.status));
  }
}

/** The status table's cells for one service (NAME, STATE, PID, TOOLS, SINCE, TRANSPORT, REASON). */
export function statusCells(s) {
  const c = s.connection;
  return {
    state: c.status === 'activating' ? `activating/${c.phase}` : c.status,
    pid: 'pid' in c && c.pid !== null ? String(c.pid) : '-',
    tools: c.status !== 'active' ? '-' : (s.heldTools ?? 0) > 0 ? `${c.toolCount} (${s.heldTools} held)` : String(c.toolCount),
    since: c.status === 'failed' || c.status === 'needs_auth' ? c.at : c.since,
    reason:
      c.status === 'failed'
        ? `${clean(c.code)}: ${clean(c.message)}`
        : c.status === 'needs_auth'
          ? `log in: wispctl mcp login ${clean(s.name)}`
          : c.status === 'active' && (s.heldTools ?? 0) > 0
            ? `${heldText(s.heldTools, s.name)} (or select it to review them here)`
            : '',
  };
}

export function describeOrigin(origin) {
  switch (origin.kind) {
    case 'manual':
      return 'registered by hand';
    case 'install':
      return `npm install of ${clean(origin.package)}@${clean(origin.version)} (plan ${clean(origin.planDigest)})`;
    case 'source':
      // A plugin's entry names its plugin ("plugin files"), the others their source ("project"): wispctl's words.
      return `${origin.source === 'plugin' && origin.plugin !== null ? `plugin ${clean(origin.plugin)}` : clean(origin.source)}: ${clean(origin.file)}`;
    case 'import':
      return `imported from ${clean(origin.file)} at ${clean(origin.at)}`;
    default:
      return clean(String(origin.kind));
  }
}

/** The last component of a path, whichever separator it uses. */
function baseName(file) {
  const text = String(file);
  return text.slice(Math.max(text.lastIndexOf('/'), text.lastIndexOf('\\')) + 1) || text;
}

/**
 * The origin as the services table shows it, short enough for its column: the file's name
 * without its directories, an install without its plan digest. The whole text
 * (describeOrigin) is the cell's title and in the service's detail.
 */
export function shortOrigin(origin) {
  switch (origin.kind) {
    case 'install':
      return `npm ${clean(origin.package)}@${clean(origin.version)}`;
    case 'source':
      return `${origin.source === 'plugin' && origin.plugin !== null ? `plugin ${clean(origin.plugin)}` : clean(origin.source)}: ${clean(baseName(origin.file))}`;
    case 'import':
      return `imported: ${clean(baseName(origin.file))}`;
    default:
      return describeOrigin(origin);
  }
}

export const KIND_TEXT = {
  tool_call: 'a tool call',
  host_tool: 'a host tool',
  registration: 'a registration',
  activation: 'an activation',
  install: 'an install',
  'network.connect': 'a network connection',
};

/** network.connect: the host and port it is bound to, as a grant is written (an IPv6 address in brackets). */
export function networkTarget(approval) {
  const host = String(approval.binding.host ?? '');
  return `${host.includes(':') ? `[${clean(host)}]` : clean(host)}:${clean(String(approval.binding.port ?? ''))}`;
}

/** The tool an approval is bound to (the daemon's binding), never what the server claims. */
export function registeredTool(approval) {
  const { binding } = approval;
  if (typeof binding.toolName === 'string') return binding.toolName;
  if (typeof binding.tool === 'string') return binding.tool;
  return approval.summary.toolName;
}

/** The question under an approval, naming the bound tool (wispctl's, without [y/N]). */
export function approvalQuestion(approval) {
  const tool = clean(registeredTool(approval));
  const service = clean(approval.summary.serviceName);
  if (approval.kind === 'network.connect') return `Let ${service} connect to ${networkTarget(approval)}?`;
  return approval.kind === 'tool_call' ? `Run ${tool} (service ${service})?` : `Allow ${tool} (${service})?`;
}

/**
 * Said on the card when the arguments hold what a page would not show as it is: invisible
 * code points (Unicode tags, zero-width, controls) or bidi controls that reorder the text.
 * null when they hold none. The arguments themselves are shown with each as an escape.
 */
export function argumentsWarning(args) {
  const { hidden, bidi, spelled } = unseenIn(args);
  if (hidden === 0 && bidi === 0) return null;
  const parts = [
    ...(hidden > 0 ? [`${hidden} invisible or control character${hidden === 1 ? '' : 's'}${spelled !== '' ? ` (Unicode tag characters spelling ${jsonForTerminal(spelled.length > 120 ? `${spelled.slice(0, 120)}...` : spelled)})` : ''}`] : []),
    ...(bidi > 0 ? [`${bidi} bidirectional control character${bidi === 1 ? '' : 's'} (they can reorder how the text reads)`] : []),
  ];
  return `WARNING: the arguments hold ${parts.join(' and ')}. Each is shown above as an escape (\\uXXXX); the server receives them as they are.`;
}

/** What the server claims about a third-party tool: [label, value] rows; none for the host's own. */
export function serverClaims(approval) {
  if (approval.kind !== 'tool_call') return [];
  const { title, annotations } = approval.summary;
  const claimed = annotations ?? {};
  const hints = Object.entries(claimed).filter(([k, v]) => k.endsWith('Hint') && v === true).map(([k]) => k);
  const annotated = typeof claimed.title === 'string' ? claimed.title : null;
  return [
    ...(title !== null ? [['title', clean(title)]] : []),
    ...(annotated !== null && annotated !== title ? [['annotated', clean(annotated)]] : []),
    ...(hints.length > 0 ? [['hints', hints.map(clean).join(', ')]] : []),
  ];
}

/** Hints a tool claims (readOnly, destructive...), as the tools table shows them. */
export function hintsOf(annotations) {
  return Object.entries(annotations ?? {}).filter(([k, v]) => k.endsWith('Hint') && v === true).map(([k]) => clean(k.replace(/Hint$/, ''))).join(', ') || '-';
}

/** A resolved approval, for a card whose question is withdrawn. */
export function resolvedText(state, here) {
  if (here) return state.status === 'denied' ? 'Denied here.' : 'Approved here.';
  switch (state.status) {
    case 'approved':
    case 'consumed':
      return `Answered elsewhere: approved${state.by ? ` by ${clean(state.by)}` : ''}. This question is withdrawn.`;
    case 'denied':
      return `Answered elsewhere: denied${state.by ? ` by ${clean(state.by)}` : ''}. This question is withdrawn.`;
    case 'cancelled':
      return `Cancelled: ${clean(state.reason)}. This question is withdrawn.`;
    case 'stale':
      return `Stale: ${clean(state.reason)}. This question is withdrawn.`;
    case 'answered':
      return 'Answered elsewhere. This question is withdrawn.';
    default:
      return `Answered elsewhere (${clean(String(state.status))}). This question is withdrawn.`;
  }
}

/** A value as exact JSON, two-space indented, with every hidden code point in its strings as a JSON escape (wispctl's jsonForTerminal). */
export function pretty(value) {
  return jsonForTerminal(value, 2);
}

/** An error from the panel API as one line: `message (CODE)`, wispctl's shape. */
export function errorText(error) {
  const details = Array.isArray(error.errors) ? error.errors.map((e) => `; ${clean(String(e.path))}: ${clean(String(e.message))}`).join('') : '';
  return `${clean(String(error.message))}${details} (${clean(String(error.code))})`;
}

/** KEYCHAIN_UNAVAILABLE, with the way out: the daemon's message, then "this run only". */
export function keychainAdvice(error) {
  return `The keychain is not available here: ${clean(error.message)} (${clean(error.code)}). Choose "this run only" to keep the value in the daemon's memory until it stops, and save again.`;
}

/** Before carrying saved variables over to an edited program: which values go to what (wispctl's carryOverText). */
export function carryOverText(service) {
  if (service.transport !== 'stdio') return `${service.headers.map((h) => clean(h.name)).join(', ')} will be sent to: ${clean(service.url ?? '')}`;
  return `${service.env.map((v) => clean(v.name)).join(', ')} will be given to: ${[service.command, ...service.args].map(clean).join(' ')} (cwd ${service.cwd !== null ? clean(service.cwd) : 'daemon default'})`;
}

/** The plan as `wispctl install` shows it (planText), line by line. */
export function planLines(plan) {
  return [
    `Install ${clean(plan.package)}@${clean(plan.version)} (npm ${clean(plan.runtime.npmVersion)}, node ${clean(plan.runtime.nodeVersion)})`,
    `  from:       ${clean(plan.registry)}`,
    `  into:       ${clean(plan.directory)}`,
    `  then run:   ${[plan.bin, ...plan.args].map(clean).join(' ')} (registered disabled)`,
    '  it will:',
    ...plan.will.map((line) => `    - ${clean(line)}`),
    '  it will not:',
    ...plan.wont.map((line) => `    - ${clean(line)}`),
  ];
}

export function installQuestion(plan) {
  return `Install ${clean(plan.package)}@${clean(plan.version)}?`;
}

/** A step of a running install: `3/6 verify` (the CLI's progress bar, without the bar). */
export function progressLine(progress) {
  return `${progress.index}/${progress.total} ${clean(progress.step.replace('_', ' '))}`;
}

/** After an install (installedText); the last line points to this panel rather than to wispctl. */
export function installedLines(service, attempt, reused) {
  return [
    `${reused ? 'already installed' : 'installed'} ${clean(attempt.package)}@${clean(attempt.version)} (${attempt.lockedPackages} packages verified)`,
    ...(attempt.installScripts.length > 0 ? [`install scripts declared, NOT run: ${clean(attempt.installScripts.join(', '))}`] : []),
    `registered ${clean(service.name)} (disabled): ${[service.command, ...service.args].map(clean).join(' ')}`,
    'trust and start it on the Services page',
  ];
}

/** One attempt, as `wispctl install show` prints it (attemptText). */
export function attemptLines(a) {
  return [
    `${clean(a.package)}@${clean(a.version)}: ${clean(a.status)}${a.step !== null ? ` (last step: ${clean(a.step)})` : ''}`,
    `digest:     ${clean(a.digest)}`,
    `registry:   ${clean(a.registry)}`,
    `directory:  ${clean(a.directory)}`,
    `bin, args:  ${[a.bin, ...a.args].map(clean).join(' ')}`,
    `runtime:    node ${clean(a.runtime.nodeVersion)}, npm ${clean(a.runtime.npmVersion)}`,
    `started:    ${clean(a.startedAt)}${a.endedAt !== null ? `, ended ${clean(a.endedAt)}` : ''}`,
    `packages:   ${a.lockedPackages}${a.installScripts.length > 0 ? `; install scripts declared, NOT run: ${clean(a.installScripts.join(', '))}` : ''}`,
    ...(a.serviceName !== null ? [`service:    ${clean(a.serviceName)} (${clean(a.serviceId)})`] : []),
    ...(a.error !== null ? [`error:      ${clean(a.error.code)}: ${cleanLines(a.error.message).join('\n  ')}`, ...(a.error.problems ?? []).map((p) => `  ${clean(p.path)}: ${clean(p.problem)}`)] : []),
    // npm's output is untrusted (packages print what they like): each line cleaned and indented, as wispctl does.
    ...(a.logTail.trim() !== '' ? ['npm output (tail):', ...cleanLines(a.logTail.trimEnd()).map((l) => `  ${l}`)] : []),
  ];
}
