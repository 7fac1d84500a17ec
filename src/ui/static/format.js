// The words of the panel: the same as wispctl's where it has them (src/cli/render*.ts).
// Everything here returns plain strings; the pages render them as text, never as HTML.

/** A connection state on one line, as `wispctl mcp status` describes it. */
export function describeConnection(c) {
  switch (c.status) {
    case 'disabled':
      return 'disabled';
    case 'activating':
      return `activating (${c.phase}${c.pid !== null ? `, pid ${c.pid}` : ''})`;
    case 'active':
      return `active (${c.pid !== null ? `pid ${c.pid}` : 'remote'}, ${c.toolCount} tools)`;
    case 'failed':
      return `failed ${c.code}: ${c.message}`;
    case 'needs_auth':
      return `needs_auth: ${c.message} (log in below, or wispctl mcp login NAME)`;
    case 'stopping':
      return 'stopping';
    default:
      return String(c.status);
  }
}

/** The status table's cells for one service (NAME, STATE, PID, TOOLS, SINCE, TRANSPORT, REASON). */
export function statusCells(s) {
  const c = s.connection;
  return {
    state: c.status === 'activating' ? `activating/${c.phase}` : c.status,
    pid: 'pid' in c && c.pid !== null ? String(c.pid) : '-',
    tools: c.status === 'active' ? String(c.toolCount) : '-',
    since: c.status === 'failed' || c.status === 'needs_auth' ? c.at : c.since,
    reason: c.status === 'failed' ? `${c.code}: ${c.message}` : c.status === 'needs_auth' ? `log in: wispctl mcp login ${s.name}` : '',
  };
}

export function describeOrigin(origin) {
  switch (origin.kind) {
    case 'manual':
      return 'registered by hand';
    case 'install':
      return `npm install of ${origin.package}@${origin.version} (plan ${origin.planDigest})`;
    case 'source':
      return `${origin.source}${origin.plugin !== null ? ` plugin ${origin.plugin}` : ''}: ${origin.file}`;
    case 'import':
      return `imported from ${origin.file} at ${origin.at}`;
    default:
      return String(origin.kind);
  }
}

export const KIND_TEXT = {
  tool_call: 'a tool call',
  host_tool: 'a host tool',
  registration: 'a registration',
  activation: 'an activation',
  install: 'an install',
};

/** The tool an approval is bound to (the daemon's binding), never what the server claims. */
export function registeredTool(approval) {
  const { binding } = approval;
  if (typeof binding.toolName === 'string') return binding.toolName;
  if (typeof binding.tool === 'string') return binding.tool;
  return approval.summary.toolName;
}

/** The question under an approval, naming the bound tool (wispctl's, without [y/N]). */
export function approvalQuestion(approval) {
  const tool = registeredTool(approval);
  return approval.kind === 'tool_call' ? `Run ${tool} (service ${approval.summary.serviceName})?` : `Allow ${tool} (${approval.summary.serviceName})?`;
}

/** What the server claims about a third-party tool: [label, value] rows; none for the host's own. */
export function serverClaims(approval) {
  if (approval.kind !== 'tool_call') return [];
  const { title, annotations } = approval.summary;
  const claimed = annotations ?? {};
  const hints = Object.entries(claimed).filter(([k, v]) => k.endsWith('Hint') && v === true).map(([k]) => k);
  const annotated = typeof claimed.title === 'string' ? claimed.title : null;
  return [
    ...(title !== null ? [['title', title]] : []),
    ...(annotated !== null && annotated !== title ? [['annotated', annotated]] : []),
    ...(hints.length > 0 ? [['hints', hints.join(', ')]] : []),
  ];
}

/** Hints a tool claims (readOnly, destructive...), as the tools table shows them. */
export function hintsOf(annotations) {
  return Object.entries(annotations ?? {}).filter(([k, v]) => k.endsWith('Hint') && v === true).map(([k]) => k.replace(/Hint$/, '')).join(', ') || '-';
}

/** A resolved approval, for a card whose question is withdrawn. */
export function resolvedText(state, here) {
  if (here) return state.status === 'denied' ? 'Denied here.' : 'Approved here.';
  switch (state.status) {
    case 'approved':
    case 'consumed':
      return `Answered elsewhere: approved${state.by ? ` by ${state.by}` : ''}. This question is withdrawn.`;
    case 'denied':
      return `Answered elsewhere: denied${state.by ? ` by ${state.by}` : ''}. This question is withdrawn.`;
    case 'cancelled':
      return `Cancelled: ${state.reason}. This question is withdrawn.`;
    case 'stale':
      return `Stale: ${state.reason}. This question is withdrawn.`;
    case 'answered':
      return 'Answered elsewhere. This question is withdrawn.';
    default:
      return `Answered elsewhere (${state.status}). This question is withdrawn.`;
  }
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

/** An error from the panel API as one line: `message (CODE)`, wispctl's shape. */
export function errorText(error) {
  const details = Array.isArray(error.errors) ? error.errors.map((e) => `; ${e.path}: ${e.message}`).join('') : '';
  return `${error.message}${details} (${error.code})`;
}

/** Code points a page would hide or act on (controls, format characters such as zero-width and Unicode tags, bidi): wispctl's clean() set, newline and tab kept. */
const UNSEEN = /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/** A server's text with every hidden code point shown as its escape (\u200b, \u{e0041}, \x1b), as wispctl shows it. */
export function visible(text) {
  return String(text).replace(UNSEEN, (ch) => {
    const cp = ch.codePointAt(0) ?? 0;
    return cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\u{${cp.toString(16)}}`;
  });
}

/** KEYCHAIN_UNAVAILABLE, with the way out: the daemon's message, then "this run only". */
export function keychainAdvice(error) {
  return `The keychain is not available here: ${error.message} (${error.code}). Choose "this run only" to keep the value in the daemon's memory until it stops, and save again.`;
}

/** Before carrying saved variables over to an edited program: which values go to what (wispctl's carryOverText). */
export function carryOverText(service) {
  if (service.transport !== 'stdio') return `${service.headers.map((h) => h.name).join(', ')} will be sent to: ${service.url ?? ''}`;
  return `${service.env.map((v) => v.name).join(', ')} will be given to: ${[service.command, ...service.args].join(' ')} (cwd ${service.cwd ?? 'daemon default'})`;
}

/** The plan as `wispctl install` shows it (planText), line by line. */
export function planLines(plan) {
  return [
    `Install ${plan.package}@${plan.version} (npm ${plan.runtime.npmVersion}, node ${plan.runtime.nodeVersion})`,
    `  from:       ${plan.registry}`,
    `  into:       ${plan.directory}`,
    `  then run:   ${[plan.bin, ...plan.args].join(' ')} (registered disabled)`,
    '  it will:',
    ...plan.will.map((line) => `    - ${line}`),
    '  it will not:',
    ...plan.wont.map((line) => `    - ${line}`),
  ];
}

export function installQuestion(plan) {
  return `Install ${plan.package}@${plan.version}?`;
}

/** A step of a running install: `3/6 verify` (the CLI's progress bar, without the bar). */
export function progressLine(progress) {
  return `${progress.index}/${progress.total} ${progress.step.replace('_', ' ')}`;
}

/** After an install (installedText); the last line points to this panel rather than to wispctl. */
export function installedLines(service, attempt, reused) {
  return [
    `${reused ? 'already installed' : 'installed'} ${attempt.package}@${attempt.version} (${attempt.lockedPackages} packages verified)`,
    ...(attempt.installScripts.length > 0 ? [`install scripts declared, NOT run: ${attempt.installScripts.join(', ')}`] : []),
    `registered ${service.name} (disabled): ${[service.command, ...service.args].join(' ')}`,
    'trust and start it on the Services page',
  ];
}

/** One attempt, as `wispctl install show` prints it (attemptText). */
export function attemptLines(a) {
  return [
    `${a.package}@${a.version}: ${a.status}${a.step !== null ? ` (last step: ${a.step})` : ''}`,
    `digest:     ${a.digest}`,
    `registry:   ${a.registry}`,
    `directory:  ${a.directory}`,
    `bin, args:  ${[a.bin, ...a.args].join(' ')}`,
    `runtime:    node ${a.runtime.nodeVersion}, npm ${a.runtime.npmVersion}`,
    `started:    ${a.startedAt}${a.endedAt !== null ? `, ended ${a.endedAt}` : ''}`,
    `packages:   ${a.lockedPackages}${a.installScripts.length > 0 ? `; install scripts declared, NOT run: ${a.installScripts.join(', ')}` : ''}`,
    ...(a.serviceName !== null ? [`service:    ${a.serviceName} (${a.serviceId})`] : []),
    ...(a.error !== null ? [`error:      ${a.error.code}: ${a.error.message}`, ...(a.error.problems ?? []).map((p) => `  ${p.path}: ${p.problem}`)] : []),
    ...(a.logTail.trim() !== '' ? ['npm output (tail):', ...a.logTail.trimEnd().split('\n').map((l) => `  ${l}`)] : []),
  ];
}
