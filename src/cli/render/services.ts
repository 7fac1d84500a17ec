import { asOmitted, failureTail, followLogHint, heldText, servicesSummary, summaryText, type ConnectionState, type Result, type Service, type ToolInfo } from '../../core/index.js';
import { clean, cleanBlock, clip, oneLine, showArg, showJson, table } from '../render.js';
import { reasonCell, toolsCell } from './wide.js';
import { planLines, sandboxCell, sandboxLines, UNSANDBOXED, type SandboxPlanResult } from './sandbox.js';

/** Services, their connections and tools, as wispctl shows them. */

export function describeOrigin(origin: Service['origin']): string {
  switch (origin.kind) {
    case 'manual':
      return 'registered by hand';
    case 'install':
      return `npm install of ${clean(origin.package)}@${clean(origin.version)} (plan ${clean(origin.planDigest)})`;
    case 'source':
      // A plugin's entry names its plugin ("plugin files"), the others their source ("project").
      return `${origin.source === 'plugin' && origin.plugin !== null ? `plugin ${clean(origin.plugin)}` : clean(origin.source)}: ${showArg(origin.file)}`;
    case 'import':
      return `imported from ${showArg(origin.file)} at ${clean(origin.at)}`;
  }
}

/** `9 tools`, and when some are held: `9 tools, 2 held for review: wispctl mcp review NAME`. */
export function toolsText(toolCount: number, heldTools: number, serviceName: string): string {
  return `${toolCount} tool${toolCount === 1 ? '' : 's'}${heldTools > 0 ? `, ${heldText(heldTools, serviceName)}` : ''}`;
}

/**
 * A connection on one line. `service` (its transport, name and held tools), when known,
 * says where it runs and which of its tools wait for review; an event's state alone says
 * neither (a pid is shown when there is one).
 */
export function describeConnection(state: ConnectionState, service?: Pick<Service, 'name' | 'transport' | 'heldTools'>): string {
  switch (state.status) {
    case 'disabled':
      return 'disabled';
    case 'activating':
      return `activating (${state.phase}${state.pid !== null ? `, pid ${state.pid}` : ''})`;
    case 'active': {
      const where = state.pid !== null ? `pid ${state.pid}, ` : service !== undefined && service.transport !== 'stdio' ? 'remote, ' : '';
      return `active (${where}${toolsText(state.toolCount, service?.heldTools ?? 0, service?.name ?? '')})`;
    }
    case 'failed':
      return `failed ${clean(state.code)}: ${clean(state.message)}`;
    case 'needs_auth':
      return `needs_auth${state.authorizationServer !== null ? ` at ${clean(state.authorizationServer)}` : ''}: ${clean(state.message)} (wispctl mcp login NAME)`;
    case 'stopping':
      return 'stopping';
  }
}

/** A service's own variables: names and storage for values kept secret, `NAME=template` for those written with `${VAR}`. */
function ownVariables(service: Service): string[] {
  return [...service.env.map((v) => `${clean(v.name)} (${v.storage}${v.plain === true ? ', plain: not redacted' : ''})`), ...service.envTemplates.map((t) => `${clean(t.name)}=${showArg(t.template)}`)];
}

function ownHeaders(service: Service): string {
  const all = [...service.headers.map((h) => `${clean(h.name)} (${h.storage})`), ...service.headerTemplates.map((t) => `${clean(t.name)}: ${showArg(t.template)}`)];
  return all.length === 0 ? '(none)' : all.join(', ');
}

/**
 * Every `${VAR}` a launch reads from the daemon's environment, one line each: the field, the
 * variable, whether its value is a secret, and the file it is written in. Empty when none.
 */
export function environmentReadLines(service: Service, label: string): string[] {
  const reads = service.environmentReads;
  if (reads.length === 0) return [];
  const files = [...new Set(reads.map((r) => r.file).filter((f): f is string => f !== null))];
  const pad = ' '.repeat(label.length + 2);
  return [
    `${label}${reads.length} ${reads.length === 1 ? 'variable' : 'variables'} of the daemon's environment at launch${files.length > 0 ? `, as written in ${files.map(showArg).join(', ')}` : ''}:`,
    ...reads.map((r) => `${pad}${clean(r.field)} <- \${${clean(r.variable)}} (${r.secret ? 'a secret: redacted wherever it appears' : 'public: shown as it is'})`),
  ];
}

export function describeService(service: Service): string {
  const where =
    service.transport !== 'stdio'
      ? [
          `url:      ${clean(service.url ?? '')} (remote: its output is untrusted)`,
          `headers:  ${ownHeaders(service)}`,
        ]
      : [
          `command:  ${showArg(service.command)}`,
          `args:     ${service.args.length === 0 ? '(none)' : service.args.map(showArg).join(' ')}`,
          `cwd:      ${service.cwd !== null ? showArg(service.cwd) : '(daemon default)'}`,
          `env:      ${ownVariables(service).length === 0 ? '(none)' : ownVariables(service).join(', ')}`,
          ...sandboxLines(service, 'sandbox:  '),
        ];
  const c = service.connection;
  return [
    `name:     ${clean(service.name)}`,
    `id:       ${clean(service.id)}`,
    `state:    ${describeConnection(c, service)}`,
    ...(c.status === 'active' ? [`server:   ${clip(c.server.name, 100)} ${clip(c.server.version, 100)} (what the server says)`, `protocol: MCP ${clip(c.server.protocolVersion, 20)}`] : []),
    `origin:   ${describeOrigin(service.origin)}`,
    ...where,
    ...environmentReadLines(service, 'reads:    '),
    `timeout:  ${service.timeoutMs ?? 10000} ms`,
    `media:    ${mediaText(service)}`,
    `version:  ${service.configVersion}`,
    `updated:  ${clean(service.updatedAt)}`,
  ].join('\n');
}

/** The status panel: one row per service. */
/** Longest REASON cell, in code points: what failed and what to do, not a whole PATH. */
const MAX_REASON = 120;

export function servicesTable(services: readonly Service[]): string {
  if (services.length === 0) return 'no services registered (add one with: wispctl mcp add NAME -- COMMAND [ARGS...])';
  const rows = table(
    ['NAME', 'STATE', 'PID', 'TOOLS', 'SINCE', 'TRANSPORT', 'SANDBOX', 'REASON'],
    services.map((s) => {
      const c = s.connection;
      const state = c.status === 'activating' ? `activating/${c.phase}` : c.status;
      const pid = 'pid' in c && c.pid !== null ? String(c.pid) : '-';
      const since = c.status === 'failed' || c.status === 'needs_auth' ? c.at : c.since;
      return [s.name, state, pid, toolsCell(s), since, s.transport, sandboxCell(s), reasonCell(s, MAX_REASON)];
    }),
  );
  return `${rows}

${summaryText(servicesSummary(services))}`;
}

/**
 * What a service will do once trusted, before the question: every field is the daemon's own
 * record of what will run (services.get), cleaned.
 */
/** The media setting, as mcp show and the trust prompt say it. */
export function mediaText(service: Service): string {
  return service.media
    ? 'passed whole to MCP clients of wispctl mcp serve (images, audio, binary resources: what the server sends, checked for type and size only; --no-media turns it off)'
    : 'markers (images, audio and binary resources become their type and size; --media passes them to MCP clients)';
}

export function activationText(service: Service, plan?: SandboxPlanResult | { readonly error: string }): string {
  return [activationLines(service, plan), `  media:        ${mediaText(service)}`].join('\n');
}

function activationLines(service: Service, plan?: SandboxPlanResult | { readonly error: string }): string {
  return (
    service.transport !== 'stdio'
      ? [
          `${clean(service.name)} is a remote server: the daemon will send it requests, and what it answers is untrusted.`,
          `  url:          ${clean(service.url ?? '')}`,
          `  headers:      ${ownHeaders(service)}`,
          ...environmentReadLines(service, '  reads:        '),
          `  origin:       ${describeOrigin(service.origin)}`,
        ]
      : [
          runsAs(service),
          `  command:      ${showArg(service.command)}`,
          `  args:         ${service.args.length === 0 ? '(none)' : service.args.map(showArg).join(' ')}`,
          `  cwd:          ${service.cwd !== null ? showArg(service.cwd) : '(daemon default)'}`,
          `  environment:  ${ownVariables(service).length === 0 ? '(no variables of its own; the minimal inherited set only)' : `the minimal inherited set, plus ${ownVariables(service).join(', ')}`}`,
          ...environmentReadLines(service, '  reads:        '),
          `  origin:       ${describeOrigin(service.origin)}`,
          ...(plan === undefined ? [] : 'error' in plan ? [`  sandbox:      what it needs to run could not be worked out: ${clean(plan.error)}`] : planLines(service, plan.plan, '  ')),
        ]
  ).join('\n');
}

/** The first line of a local server's trust prompt: where it will run, and with what. */
function runsAs(service: Service): string {
  const name = clean(service.name);
  switch (service.sandbox.status) {
    case 'on':
      return `${name} will run in a sandbox: it sees only the paths listed below, and the network shown.`;
    case 'off':
      return `${name} will run with its sandbox OFF (--no-sandbox): ${UNSANDBOXED}.`;
    default:
      return `${name} will run as you, with your permissions: it is not sandboxed (registered before sandboxes existed; turn it on with: wispctl mcp sandbox ${showArg(service.name)} --on). Its working directory is not a sandbox.`;
  }
}

export function activationQuestion(service: Service): string {
  return service.transport !== 'stdio' ? `Trust and connect to ${clean(service.name)}? [y/N] ` : `Trust and start ${showArg(service.command)} (service ${clean(service.name)})? [y/N] `;
}

export function toolsTable(tools: readonly ToolInfo[]): string {
  if (tools.length === 0) return 'no active tools';
  const held = tools.filter((t) => t.pin !== 'trusted');
  const listed = table(
    ['SERVICE', 'TOOL', 'MODEL NAME', 'HINTS', 'DESCRIPTION (from the server, untrusted)'],
    tools.map((t) => [
      t.serviceName,
      // A held or unavailable tool is marked where its name is: not callable, not offered to models.
      `${showArg(t.name)}${t.pin === 'trusted' ? '' : ` [HELD: ${t.pin}]`}${t.unavailable !== null ? ' [UNAVAILABLE]' : ''}`, // table() cleans every cell
      t.modelName,
      Object.entries(t.annotations ?? {})
        .filter(([k, v]) => k.endsWith('Hint') && v === true)
        .map(([k]) => k.replace(/Hint$/, ''))
        .join(',') || '-',
      oneLine(t.description, 60),
    ]),
  );
  const unavailable = tools.filter((t) => t.unavailable !== null).map((t) => `${showArg(t.name)} (${clean(t.serviceName)}) cannot be called: ${clean(t.unavailable ?? '')}`);
  return [listed, ...(held.length > 0 ? [heldNote(held)] : []), ...(unavailable.length > 0 ? [unavailable.join('\n')] : [])].join('\n\n');
}

/** How many of these tools are held, and the command that reviews them. */
export function heldNote(held: readonly ToolInfo[]): string {
  const services = [...new Set(held.map((t) => t.serviceName))];
  return `${held.length} held tool${held.length === 1 ? '' : 's'} (changed or added since trusted; not callable): review with ${services.map((n) => `wispctl mcp review ${showArg(n)}`).join(', ')}`;
}

export function toolResultText(result: Result<'tools.call'>): string {
  // Each part where the server put it: a marker stands where media was left out.
  const parts = result.content.map((item) => {
    const c = asOmitted(item);
    return c !== null ? `[omitted ${clean(c.originalType)}${c.mimeType !== null ? ` ${clean(c.mimeType)}` : ''}${c.bytes !== null ? `, ${c.bytes} bytes` : ''}]` : item.type === 'text' || item.type === 'resource' ? cleanBlock(item.text) : '';
  });
  const structured = result.structuredContent !== null ? [`structured: ${showJson(result.structuredContent)}`] : [];
  const note = [
    ...(result.originalLength > result.text.length ? [`[truncated: ${result.originalLength} characters, ${result.text.length} shown]`] : []),
    ...(result.structuredOmitted !== null ? [`[structured content omitted: ${clean(result.structuredOmitted.reason)}]`] : []),
  ];
  return [...parts, ...structured, ...note].filter((l) => l !== '').join('\n');
}

/** Why a local service failed, where it failed: its last stderr lines (redacted by the daemon), and how to follow its log. */
export function failureTailText(service: Service, logs: Result<'services.logs'>): string | undefined {
  const lines = failureTail(logs.stderr);
  // Nothing written (a command not found never ran): the failure's own message says it all.
  if (lines.length === 0) return undefined;
  return [`the last ${lines.length} stderr lines of ${clean(service.name)}:`, ...lines.map((l) => `  ${clean(l)}`), `follow its log: ${clean(followLogHint(service.name))}`].join('\n');
}

export function logsText(logs: Result<'services.logs'>): string {
  return (logs.droppedChars > 0 ? `[${logs.droppedChars} older characters dropped]\n` : '') + cleanBlock(logs.stderr.replace(/\n$/, ''));
}

export function registeredText(service: Service): string {
  return `registered ${clean(service.name)} (disabled, id ${clean(service.id)})\n${describeService(service)}`;
}

export function updatedText(service: Service): string {
  return `updated ${clean(service.name)} (disabled, configVersion ${service.configVersion})\n${describeService(service)}`;
}

export function removedText(deleted: Result<'services.delete'>['deleted']): string {
  return `removed ${clean(deleted.name)} (${clean(deleted.id)})`;
}

/** A service and its connection, on one line (after activate, disable, refresh). */
export function stateLine(service: Service): string {
  return `${clean(service.name)}: ${describeConnection(service.connection, service)}`;
}

export function toolFailureText(result: unknown): string {
  const text = (result as { text?: unknown } | undefined)?.text;
  return cleanBlock(typeof text === 'string' ? text : '');
}

/** Where a secret value is kept, after it was saved. */
function keptIn(session: boolean): string {
  return session ? 'session only' : 'keychain';
}

export function variableSavedText(service: Service, variable: string, session: boolean): string {
  return `${clean(service.name)}: ${clean(variable)} saved (${keptIn(session)}); the service is disabled until activated again`;
}

export function variablesText(env: Service['env']): string {
  return env.length === 0 ? 'no variables' : table(['VARIABLE', 'STORAGE', 'SECRET'], env.map((v) => [v.name, v.storage, v.plain === true ? 'no (plain: not redacted)' : 'yes']));
}

/** Before `env carry-over` asks: which values would go to which program. */
export function carryOverText(service: Service): string {
  // A remote service's saved values are its header values, bound to its URL.
  if (service.transport !== 'stdio') return `${clean(service.headers.map((h) => h.name).join(', '))} will be sent to: ${clean(service.url ?? '')}`;
  return `${clean(service.env.map((v) => v.name).join(', '))} will be given to: ${[service.command, ...service.args].map(showArg).join(' ')} (cwd ${service.cwd !== null ? showArg(service.cwd) : 'daemon default'})`;
}

export function headerSavedText(service: Service, header: string, session: boolean): string {
  return `${clean(service.name)}: ${clean(header)} saved (${keptIn(session)}); the service is disabled until activated again`;
}

export function headersText(headers: Service['headers']): string {
  return headers.length === 0 ? 'no headers' : table(['HEADER', 'STORAGE'], headers.map((h) => [h.name, h.storage]));
}

/** A service name and what happened to it: `files: variables cleared`. */
export function serviceDone(service: Service, what: string): string {
  return `${clean(service.name)}: ${what}`;
}

/** Where to log in; the URL comes from the server's metadata: shown cleaned (a browser gets the exact one). */
export function loginUrlText(service: Service, authorizationUrl: string, redirectUri: string): string {
  return `Open this URL to log in to ${clean(service.name)} (the answer comes back to ${clean(redirectUri)}):\n\n  ${clean(authorizationUrl)}\n`;
}

/** A logout says both what happened at the authorization server and that the keychain forgot the login. */
export function loggedOutText(service: Service, revocation: { status: string; message: string }): string {
  const remote =
    revocation.status === 'revoked' ? clean(revocation.message) : revocation.status === 'nothing' ? 'nothing to revoke' : `not revoked at the server: ${clean(revocation.message)}`;
  return `${clean(service.name)}: logged out; ${remote}; tokens removed from the keychain`;
}

export function loggedInText(service: Service): string {
  const c = service.connection;
  return `${clean(service.name)}: logged in; ${c.status === 'active' ? `active, ${toolsText(c.toolCount, service.heldTools, service.name)}` : c.status}`;
}

/** The prompts for secret values (read without echo). */
export const secretPrompt = {
  variable: (service: Service, variable: string): string => `value for ${clean(variable)} (${clean(service.name)}, not shown): `,
  header: (service: Service, header: string): string => `value for the ${clean(header)} header (${clean(service.name)}, not shown): `,
  clientSecret: (name: string): string => `client secret for ${clean(name)} (not shown): `,
};
