import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { ENV_NAME_PATTERN, WispError, type Service } from '../../core/index.js';
import { absoluteDir, parseArgsJson, parseNonNegative } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, nonEmpty, withSessionAdvice } from '../keychain.js';
import { readSecret } from '../prompt.js';
import { clean, showArg } from '../render.js';
import { registeredText } from '../render/services.js';
import { stdinIsTerminal } from '../stdin.js';
import { UNSANDBOXED } from '../render/sandbox.js';
import { addProfile, addSandboxOptions, anySandboxFlag, type SandboxFlags } from './mcp-sandbox.js';

/**
 * `wispctl mcp add`, in the form users of `claude mcp add` type: NAME, then a program and its
 * arguments (stdio) or a URL (--transport http); --env/--header name values that are asked
 * without echo, never taken from the command line.
 */

/**
 * The transports `mcp add` registers (and add-json accepts as "type"). The legacy SSE
 * transport is to be one more entry here, with its register call in registerService.
 */
export const ADD_TRANSPORTS = ['stdio', 'http', 'sse'] as const;
export type AddTransport = (typeof ADD_TRANSPORTS)[number];

const ENV_NAME = new RegExp(ENV_NAME_PATTERN);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

interface AddOptions extends SandboxFlags {
  transport?: AddTransport;
  env: string[];
  header: string[];
  session?: boolean;
  media?: boolean;
  argsJson?: string;
  cwd?: string;
  timeoutMs?: number;
}

/** One value the user is asked for: an environment variable (stdio) or a header (http). */
interface Wanted {
  readonly kind: 'env' | 'header';
  readonly name: string;
}

/** The command line that keeps the values for this daemon run only: options, then `--session`, then the tail. */
interface Advice {
  readonly words: string[];
  readonly tail: string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const TIMEOUT_HELP = 'deadline for initialize + discovery, and for each tool call (a progress notification from the server starts it again); 100-600000, default 10000';

const EXAMPLES = `
Examples:
  wispctl mcp add files -- /usr/local/bin/node /opt/mcp/files/server.js --root /home/me/docs
  wispctl mcp add --env GITHUB_TOKEN github -- /usr/local/bin/github-mcp-server stdio
  wispctl mcp add --transport http --header Authorization notion https://mcp.notion.com/mcp

A stdio server runs sandboxed: no network, read-write on its --cwd only, read-only on what it
needs to run (its runtime, the system's libraries, the script or package named), a private
empty $HOME and /tmp. Grant more with --allow-read, --allow-write, --allow-net; --no-sandbox
gives it every file and host you have. Paths in its arguments are not granted by themselves:
  wispctl mcp add --allow-write /home/me/docs files -- /usr/bin/node /opt/mcp/files/server.js /home/me/docs

Put the program's own arguments after --, so that wispctl does not read them as its options.
--env and --header take a NAME only: the value is asked without echo (or read from stdin when
piped) and kept in the OS keychain (with --session: in memory). NAME=value is refused: a value
on the command line lands in your shell history. Remote servers that log in with OAuth:
wispctl mcp add-remote --oauth.`;

/** The media setting's help, for add and edit. */
export const MEDIA_HELP = 'pass its images, audio and binary resources whole to MCP clients of wispctl mcp serve (default: each becomes a marker with its type and size, as for models); shown when you trust it';

/** wispctl mcp add. */
export function registerAdd(mcp: Command, ctx: CliContext): void {
  const command = mcp
    .command('add')
    .description('register an MCP server: a program (stdio) or a URL (--transport http); stored disabled, nothing runs')
    .argument('<name>', 'unique name: 1-64 of A-Z a-z 0-9 . _ -')
    .argument('[command-or-url]', 'stdio: the executable (an absolute path is best; a bare name is looked up on the daemon\'s PATH); http: the endpoint URL')
    .argument('[args...]', 'stdio: its arguments, passed item by item (put them after --)')
    .addOption(new Option('-t, --transport <kind>', 'stdio (a program, the default), http (streamable HTTP) or sse (the legacy HTTP+SSE transport)').choices(ADD_TRANSPORTS))
    .option('-e, --env <var>', 'stdio: a variable the server needs, by NAME only; its value is asked without echo (repeat for more)', collect, [])
    .option('-H, --header <name>', 'http: a header (e.g. Authorization), by NAME only; its value is asked without echo (repeat for more)', collect, [])
    .option('--session', 'keep the --env and --header values in memory only, for this daemon run (not in the keychain)')
    .option('--args-json <json>', 'stdio: arguments as a JSON array of strings, instead of after --')
    .option('--cwd <dir>', 'stdio: working directory (a relative one is resolved against the current directory, as mcp sources add-project does)', absoluteDir)
    .option('--timeout-ms <ms>', TIMEOUT_HELP, (v) => parseNonNegative(v, '--timeout-ms'))
    .option('--media', MEDIA_HELP);
  addSandboxOptions(command, true)
    .addHelpText('after', EXAMPLES)
    .action((name: string, target: string | undefined, args: string[], opts: AddOptions) => ctx.withClient((client) => addService(client, ctx, name, target, args, opts)));
}

async function addService(client: WispClient, ctx: CliContext, name: string, target: string | undefined, args: string[], opts: AddOptions): Promise<void> {
  const transport = checkAdd(target, args, opts);
  const argList = opts.argsJson !== undefined ? parseArgsJson(opts.argsJson, args) : args;
  const wanted: Wanted[] = [...[...new Set(opts.env)].map((n): Wanted => ({ kind: 'env', name: n })), ...[...new Set(opts.header)].map((n): Wanted => ({ kind: 'header', name: n }))];
  const session = opts.session === true;
  const advice = adviceFor(name, transport, target ?? '', argList, opts);
  if (wanted.length > 0) {
    // Before a value is typed: a name that is taken, or a keychain that cannot keep it, would waste it.
    await nameIsFree(client, name);
    await keychainFirst(client, session, advice.words, advice.tail);
  }
  const values = await askValues(ctx, name, wanted);
  const service = await registerService(client, name, transport, target ?? '', argList, opts);
  if (transport === 'stdio') warnShellLine(ctx, service.name, service.command, argList);
  if (service.sandbox.status === 'off') ctx.io.err(`warning: ${showArg(service.name)} has no sandbox (--no-sandbox): ${UNSANDBOXED}`);
  const saved = values.length === 0 ? service : await withSessionAdvice(() => saveValues(client, service, values, session), advice.words, advice.tail);
  ctx.print(saved, () => registeredText(saved));
}

/** What the command line asks for, checked before anything is sent: the transport it means. */
function checkAdd(target: string | undefined, args: readonly string[], opts: AddOptions): AddTransport {
  for (const item of opts.env) checkName(item, '--env', ENV_NAME, 'a variable name (letters, digits, _; not starting with a digit)');
  for (const item of opts.header) checkName(item, '--header', HEADER_NAME, 'a header name (e.g. Authorization)');
  if (target === undefined) throw new WispError('INVALID_PARAMS', 'give the command after the name: wispctl mcp add NAME -- COMMAND [ARGS...] (or wispctl mcp add --transport http NAME URL)');
  const transport = opts.transport ?? 'stdio';
  if (opts.transport === undefined && /^https?:\/\//i.test(target)) {
    throw new WispError('INVALID_PARAMS', `${showArg(target)} is a URL: add --transport http (stdio, the default, runs a program)`);
  }
  if (transport === 'stdio') {
    if (opts.header.length > 0) throw new WispError('INVALID_PARAMS', '--header is for remote servers (--transport http); a stdio server takes --env');
    return transport;
  }
  if (args.length > 0 || opts.argsJson !== undefined) throw new WispError('INVALID_PARAMS', `--transport ${transport} takes one URL and no arguments`);
  if (anySandboxFlag(opts) || !opts.sandbox) throw new WispError('INVALID_PARAMS', `the sandbox flags are for stdio servers: a remote server (--transport ${transport}) runs elsewhere`);
  if (opts.cwd !== undefined) throw new WispError('INVALID_PARAMS', `--cwd is for stdio servers; --transport ${transport} has no working directory`);
  if (opts.env.length > 0) throw new WispError('INVALID_PARAMS', `--env sets a program's environment (stdio); a remote server takes --header`);
  return transport;
}

/** NAME, never NAME=value: a value typed on the command line stays in the shell's history and the process list. */
function checkName(item: string, flag: string, pattern: RegExp, what: string): void {
  const cut = item.search(/[=:]/);
  if (cut > 0) {
    const name = item.slice(0, cut).trim();
    throw new WispError('INVALID_PARAMS', `${flag} takes a name only, not a value: the value would land in your shell history; give ${flag} ${showArg(name)} and type it when asked`);
  }
  if (!pattern.test(item)) throw new WispError('INVALID_PARAMS', `${flag} ${showArg(item)} is not ${what}`);
}

/** The words of the same command with --session (before `-- COMMAND ARGS`, which must stay last). */
function adviceFor(name: string, transport: AddTransport, target: string, args: readonly string[], opts: AddOptions): Advice {
  const words = [
    'mcp',
    'add',
    ...(opts.transport !== undefined ? ['--transport', opts.transport] : []),
    ...opts.env.flatMap((e) => ['--env', e]),
    ...opts.header.flatMap((h) => ['--header', h]),
    ...(opts.cwd !== undefined ? ['--cwd', opts.cwd] : []),
    ...(opts.timeoutMs !== undefined ? ['--timeout-ms', String(opts.timeoutMs)] : []),
    ...opts.allowRead.flatMap((p) => ['--allow-read', p]),
    ...opts.allowWrite.flatMap((p) => ['--allow-write', p]),
    ...opts.allowNet.flatMap((h) => ['--allow-net', h]),
    ...(opts.net !== undefined ? ['--net', opts.net] : []),
    ...(!opts.sandbox ? ['--no-sandbox'] : []),
    name,
  ];
  return { words, tail: transport === 'stdio' ? ['--', target, ...args] : [target] };
}

async function nameIsFree(client: WispClient, name: string): Promise<void> {
  const found = await client.call('services.get', { name }).then(
    () => true,
    (error: unknown) => {
      if (error instanceof WispError && error.code === 'SERVICE_NOT_FOUND') return false;
      throw error;
    },
  );
  if (found) throw new WispError('SERVICE_NAME_TAKEN', `a service named ${showArg(name)} exists already (nothing was asked): wispctl mcp show ${showArg(name)}`);
}

/** Each value, without echo on a terminal; piped, stdin holds one value only. */
async function askValues(ctx: CliContext, service: string, wanted: readonly Wanted[]): Promise<(Wanted & { value: string })[]> {
  if (wanted.length > 1 && !stdinIsTerminal()) {
    throw new WispError('INVALID_PARAMS', 'stdin is not a terminal and holds one value only: give one --env or --header, and add the others with wispctl mcp env set / mcp header set');
  }
  const values: (Wanted & { value: string })[] = [];
  for (const w of wanted) {
    const prompt = w.kind === 'env' ? `value for ${clean(w.name)} (${clean(service)}, not shown): ` : `value for the ${clean(w.name)} header (${clean(service)}, not shown): `;
    values.push({ ...w, value: nonEmpty(await readSecret(prompt, ctx.io.err), `the value of ${w.name}`) });
  }
  return values;
}

async function registerService(client: WispClient, name: string, transport: AddTransport, target: string, args: string[], opts: AddOptions): Promise<Service> {
  const timeout = { ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}), ...(opts.media === true ? { media: true } : {}) };
  if (transport !== 'stdio') return (await client.call('services.registerRemote', { name, url: target, transport, ...timeout })).service;
  return (await client.call('services.register', { name, command: target, args, ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}), ...timeout, sandbox: addProfile(opts) })).service;
}

/** The values, after the registration; if they cannot be kept, the service is removed again (nothing half made). */
async function saveValues(client: WispClient, service: Service, values: readonly (Wanted & { value: string })[], session: boolean): Promise<Service> {
  const storage = session ? ('session' as const) : ('keychain' as const);
  const env = values.filter((v) => v.kind === 'env').map((v) => ({ name: v.name, value: v.value, storage }));
  const headers = values.filter((v) => v.kind === 'header').map((v) => ({ name: v.name, value: v.value, storage }));
  try {
    let saved = service;
    if (env.length > 0) saved = (await client.call('services.setEnv', { id: service.id, mode: 'upsert', variables: env })).service;
    if (headers.length > 0) saved = (await client.call('services.setHeaders', { id: service.id, mode: 'upsert', headers })).service;
    return saved;
  } catch (error) {
    await client.call('services.delete', { id: service.id }).catch(() => undefined);
    throw error;
  }
}

/**
 * `-- "node server.js"` is one program name, not a shell line, and would fail only at
 * activation: a command with spaces that names no file gets a warning with the split form.
 */
export function warnShellLine(ctx: CliContext, name: string, command: string, args: readonly string[]): void {
  if (!/\s/.test(command.trim()) || existsSync(command)) return;
  const split = [...command.trim().split(/\s+/), ...args].map(showArg).join(' ');
  ctx.io.err(`warning: the command ${showArg(command)} has spaces and no such file exists; it is one program name, not a shell line. Did you mean: wispctl mcp edit ${showArg(name)} -- ${split}`);
}
