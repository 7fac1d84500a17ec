import { WispError, clean, cleanLines, jsonForTerminal, type Approval } from '../core/index.js';

export { clean, cleanLines, jsonForTerminal };

/**
 * Terminal rendering: the one place where text meets the terminal.
 *
 * Every string a server, a config file, the model or a client controls is untrusted. Before
 * it is written to a terminal, every code point that could move the cursor, erase, recolour,
 * reorder or hide text is shown as a visible escape instead:
 * - control characters: C0 (with TAB, CR and, in a one-line field, LF), DEL, C1;
 * - format characters (category Cf): bidi embeddings, overrides and isolates, LRM/RLM/ALM,
 *   zero-width space/joiners, word joiner and invisible operators, BOM, soft hyphen, tags...;
 * - line and paragraph separators (U+2028, U+2029);
 * - every other default-ignorable code point (Hangul fillers, variation selectors...);
 * - lone surrogates.
 * ESC therefore never reaches the terminal, so no escape sequence can either. Escapes use
 * JavaScript's notation: `\r`, `\n`, `\t`, `\x1b` (up to U+00FF), `\u202e`, `\u{e0041}`.
 * Backslashes are left as they are (paths stay readable); where a value must be read
 * unambiguously it is quoted by showArg or shown as JSON, which escape backslashes too.
 *
 * One-line fields use `clean`; multi-line text (descriptions, results, stderr tails, model
 * output) uses `cleanLines`/`cleanBlock`: each line (split at LF or CRLF) is cleaned on its
 * own, so a lone CR is still shown as `\r`, and callers indent continuation lines so a
 * server's line can never pass for one of ours. `--json` output goes through jsonForTerminal:
 * the exact same JSON, with those code points written as JSON `\uXXXX` escapes.
 */

/** Multi-line text, its lines after the first indented by `indent` (so they read as part of one field). */
export function cleanBlock(text: string, indent = ''): string {
  return cleanLines(text).join(`\n${indent}`);
}

/**
 * The last guard, on everything wispctl writes: our own line breaks stay, every other
 * unsafe code point is escaped. Text already cleaned passes unchanged.
 */
export function terminalText(text: string): string {
  return cleanBlock(text);
}

/** A value as one line of exact JSON (arguments, structured content), safe for a terminal. */
export function showJson(value: unknown): string {
  return jsonForTerminal(value);
}

/** Shows an argv item so that spaces, quotes and controls are visible, without implying a shell. */
export function showArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${clean(arg.replace(/\\/g, '\\\\').replace(/"/g, '\\"'))}"`;
}

/** At most `max` code points (whitespace runs collapsed to one space), then cleaned. */
export function oneLine(text: string, max: number): string {
  const flat = Array.from(text.replace(/\s+/g, ' ').trim());
  return clean(flat.length > max ? `${flat.slice(0, max - 1).join('')}…` : flat.join(''));
}

/** At most `max` code points, cleaned, with how much was left out. */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length > max ? `${clean(points.slice(0, max).join(''))}… [${points.length - max} more characters]` : clean(text);
}

/** Plain-text tables for humans; every cell is cleaned. --json output bypasses this. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cleanRows = rows.map((row) => row.map(clean));
  const widths = headers.map((header, i) => Math.max(header.length, ...cleanRows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers.map(clean)), ...cleanRows.map(line)].join('\n');
}

/** Columns a code point may take: ASCII 1, anything else counted as 2 (wide), to be safe. */
function columnsOf(ch: string): number {
  return (ch.codePointAt(0) ?? 0) < 0x80 ? 1 : 2;
}

/** The prefix of every row that continues a line too wide for the terminal. */
export const CONTINUATION = '  | ';

/**
 * For a prompt on a terminal `columns` wide: a line longer than that is broken by us, each
 * continuation row starting with CONTINUATION, so the terminal never wraps a server's text
 * to the start of a row where it could pass for one of our lines. Unknown width: unchanged.
 */
export function fitToTerminal(text: string, columns: number | undefined): string {
  if (columns === undefined || !Number.isFinite(columns) || columns < CONTINUATION.length + 8) return text;
  const rows: string[] = [];
  for (const line of text.split('\n')) {
    let row = '';
    let width = 0;
    for (const ch of line) {
      const w = columnsOf(ch);
      if (width + w > columns) {
        rows.push(row);
        row = CONTINUATION;
        width = CONTINUATION.length;
      }
      row += ch;
      width += w;
    }
    rows.push(row);
  }
  return rows.join('\n');
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/**
 * The tool an approval is bound to, from the daemon's binding (tool_call: toolName; host
 * tools: tool), never from what the server claims about it.
 */
export function registeredTool(approval: Approval): string {
  const { binding } = approval;
  if (typeof binding.toolName === 'string') return binding.toolName;
  if (typeof binding.tool === 'string') return binding.tool;
  return approval.summary.toolName;
}

/** Longest server title shown in a prompt. */
const MAX_TITLE = 200;

/**
 * What the server merely claims about a third-party tool (title, annotations), labelled as
 * the server's; empty for the host's own approvals, whose title is the daemon's.
 */
export function serverClaims(approval: Approval, indent = '  '): string[] {
  if (approval.kind !== 'tool_call') return [];
  const { title, annotations } = approval.summary;
  const claimed = (annotations ?? {}) as Record<string, unknown>;
  const hints = Object.entries(claimed)
    .filter(([k, v]) => k.endsWith('Hint') && v === true)
    .map(([k]) => clean(k));
  const annotatedTitle = typeof claimed.title === 'string' ? claimed.title : null;
  const lines = [
    ...(title !== null ? [`${indent}  title:      ${clip(title, MAX_TITLE)}`] : []),
    ...(annotatedTitle !== null && annotatedTitle !== title ? [`${indent}  annotated:  ${clip(annotatedTitle, MAX_TITLE)}`] : []),
    ...(hints.length > 0 ? [`${indent}  hints:      ${hints.join(', ')}`] : []),
  ];
  return lines.length > 0 ? [`${indent}from the server, not verified:`, ...lines] : [];
}

const KIND_TEXT: Record<Approval['kind'], string> = {
  tool_call: 'a tool call',
  host_tool: 'a host tool',
  registration: 'a registration',
  activation: 'an activation',
  install: 'an install',
  'network.connect': 'a network connection',
};

/** network.connect: the host and port it is bound to, as a grant is written (an IPv6 address in brackets). */
export function networkTarget(approval: Approval): string {
  const host = String(approval.binding.host ?? '');
  return `${host.includes(':') ? `[${clean(host)}]` : clean(host)}:${clean(String(approval.binding.port ?? ''))}`;
}

/** A network.connect approval: the service, where it would connect, and the three answers. */
function describeNetwork(approval: Approval): string {
  const id = clean(approval.id);
  const target = networkTarget(approval);
  return [
    `approval ${id} (${clean(approval.state.status)}): ${KIND_TEXT[approval.kind]}`,
    `  service:    ${clean(approval.summary.serviceName)}`,
    `  connect to: ${target} (the connection waits for this answer)`,
    `  asked by:   ${clean(approval.requester.clientId)} (its sandbox's egress proxy)`,
    `  answer:     wispctl approve ${id} (this connection only), wispctl approve ${id} --always (also grants ${target} for good), wispctl deny ${id}`,
  ].join('\n');
}

/**
 * An approval as a human must see it before answering: first what the daemon vouches for
 * (service, the registered tool, the exact arguments; for the host's own approvals, what it
 * does), then, labelled, what the server claims.
 */
export function describeApproval(approval: Approval): string {
  if (approval.kind === 'network.connect') return describeNetwork(approval);
  const s = approval.summary;
  const requester = approval.requester;
  return [
    `approval ${clean(approval.id)} (${clean(approval.state.status)}): ${KIND_TEXT[approval.kind]}`,
    `  service:    ${clean(s.serviceName)}`,
    `  tool:       ${showArg(registeredTool(approval))}`,
    ...(approval.kind !== 'tool_call' && s.title !== null ? [`  what:       ${clean(s.title)}`] : []),
    `  arguments:  ${showJson(s.arguments)}`,
    `  asked by:   ${clean(requester.clientId)}${requester.sessionId !== null ? `, session ${clean(requester.sessionId)}` : ''}`,
    ...serverClaims(approval),
    ...toolWarnings(approval),
  ].join('\n');
}

/** Facts about the tool's definition (hidden or direction-changing characters, other services' tool names): never left out of an approval. */
export function toolWarnings(approval: Approval, indent = '  '): string[] {
  return approval.kind === 'tool_call' ? (approval.summary.warnings ?? []).map((w) => `${indent}WARNING: ${clean(w.message)}`) : [];
}

/** The question under an approval; it names the vouched tool again, last thing before the answer. */
export function approvalQuestion(approval: Approval): string {
  if (approval.kind === 'network.connect') return `Let ${clean(approval.summary.serviceName)} connect to ${networkTarget(approval)}, this connection only? [y/N] `;
  const tool = showArg(registeredTool(approval));
  return approval.kind === 'tool_call'
    ? `Run ${tool} (service ${clean(approval.summary.serviceName)})? [y/N] `
    : `Allow ${tool} (${clean(approval.summary.serviceName)})? [y/N] `;
}

/**
 * An approval inside a chat: what the daemon vouches for on the first line (service, the
 * registered tool, the exact arguments), what the host's own approvals do, then what the
 * server claims, labelled as the server's.
 */
export function describeApprovalInline(approval: Approval): string {
  const s = approval.summary;
  return [
    `tool call: ${clean(s.serviceName)}/${showArg(registeredTool(approval))} ${showJson(s.arguments)}`,
    ...(approval.kind !== 'tool_call' && s.title !== null ? [`  what: ${clean(s.title)}`] : []),
    ...serverClaims(approval),
    ...toolWarnings(approval),
  ].join('\n');
}

/** The width to fit a prompt to: the terminal's, when stderr is one. */
export function stderrColumns(): number | undefined {
  return process.stderr.isTTY ? process.stderr.columns : undefined;
}

export function approvalsText(approvals: readonly Approval[]): string {
  return approvals.length === 0 ? 'no open approvals' : approvals.map(describeApproval).join('\n\n');
}

/** An approval after an answer: `ID: approved`. */
export function approvalStateLine(approval: Approval): string {
  return `${clean(approval.id)}: ${clean(approval.state.status)}`;
}

/**
 * How a failed command reports its error. The message may carry a server's text: cleaned,
 * its continuation lines indented; a WispError's code follows, then each schema failure.
 */
export function errorLines(error: unknown): string[] {
  if (!(error instanceof WispError)) return [`wispctl: ${cleanBlock(error instanceof Error ? error.message : String(error), '  ')}`];
  const details = error.details.errors;
  return [
    `wispctl: ${cleanBlock(error.message, '  ')} (${clean(error.code)})`,
    ...(Array.isArray(details) ? (details as { path: unknown; message: unknown }[]).map((d) => `  ${clean(String(d.path))}: ${clean(String(d.message))}`) : []),
  ];
}

/** An approval this terminal does not ask about: who may answer it. */
export function waitingText(approval: Approval): string {
  return `waiting for a human: wispctl approve ${clean(approval.id)} (or deny)`;
}

/** A question withdrawn because its approval was resolved some other way. */
export function withdrawnText(resolved: Pick<Approval, 'id' | 'state'>): string {
  return `\n(approval ${clean(resolved.id)} is ${clean(resolved.state.status)}: this question is withdrawn)`;
}

/** An error as one cleaned line (an answer that could not be sent). */
export function errorLine(error: unknown): string {
  return clean(String(error));
}
