import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { EXIT, WispError, isErrorCode, type Result } from '../../core/index.js';
import { parseJson } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, withSessionAdvice } from '../keychain.js';
import { confirm } from '../prompt.js';
import { clean, showArg } from '../render.js';
import { registeredText } from '../render/services.js';
import { ADD_TRANSPORTS } from './mcp-add.js';
import { stdin, stdinIsTerminal } from '../stdin.js';

/**
 * `wispctl mcp add-json NAME JSON`: one entry in the mcpServers format (as `claude mcp
 * add-json` takes it). The JSON is untrusted: checked here (known keys only, one transport),
 * then registered by the daemon's import, which checks it again and keeps env and header
 * values in the secret store, never in a file.
 *
 * Values in `env` and `headers` are secrets the user typed or pasted: they are kept (keychain,
 * or memory with --session) only with consent: a y/N question on a terminal, or --yes. Given
 * on the command line they are in the shell's history already, so wispctl says so and points
 * at `-` (the JSON from stdin).
 */

const MAX_JSON_BYTES = 1024 * 1024;
const KEYS = ['type', 'command', 'args', 'env', 'url', 'headers', 'oauth'] as const;
const WHERE = 'the add-json entry';

type Entry = Record<string, unknown>;

interface AddJsonOptions {
  session?: boolean;
  yes?: boolean;
}

const HELP = `
Examples:
  wispctl mcp add-json memory '{"command":"/usr/local/bin/node","args":["/opt/mcp/memory/dist/index.js"]}'
  wispctl mcp add-json notion '{"type":"http","url":"https://mcp.notion.com/mcp"}'
  wispctl mcp add-json github - < github-entry.json

"type" is stdio (the default when there is a command) or http (streamable HTTP, with "url").
Keys other than type, command, args, env, url, headers and oauth are refused; \${VAR} in a
value is filled in from the daemon's environment. Values in "env" and "headers" are secrets:
they are kept in the OS keychain (with --session: in memory) only after you agree (y/N, or
--yes), and never written to a file. Give such JSON on stdin (-): on the command line it stays
in your shell history.`;

/** wispctl mcp add-json. */
export function registerAddJson(mcp: Command, ctx: CliContext): void {
  mcp
    .command('add-json')
    .description('register a server from one JSON entry in the mcpServers format (as claude mcp add-json); stored disabled, nothing runs')
    .argument('<name>', 'unique name: 1-64 of A-Z a-z 0-9 . _ -')
    .argument('<json>', 'the entry, e.g. {"command":"...","args":[...]}; - reads it from stdin')
    .option('--session', 'keep its env and header values in memory only, for this daemon run (not in the keychain)')
    .option('-y, --yes', 'keep the env and header values the entry holds without asking (for scripts)')
    .addHelpText('after', HELP)
    .action((name: string, json: string, opts: AddJsonOptions) => ctx.withClient((client) => addJson(client, ctx, name, json, opts)));
}

async function addJson(client: WispClient, ctx: CliContext, name: string, json: string, opts: AddJsonOptions): Promise<void> {
  const fromStdin = json === '-';
  const text = fromStdin ? await readStdin() : json;
  if (Buffer.byteLength(text) > MAX_JSON_BYTES) throw new WispError('LIMIT_EXCEEDED', `the JSON is larger than ${MAX_JSON_BYTES} bytes`);
  const entry = checkEntry(parseJson(text, 'the JSON'));
  const secrets = secretNames(entry);
  const session = opts.session === true;
  const advice = { words: ['mcp', 'add-json', name], tail: [fromStdin ? '-' : 'JSON'] };
  if (secrets.length > 0) {
    if (!fromStdin) ctx.io.err(`warning: the JSON on the command line holds values for ${secrets.join(', ')}: they are in your shell history now (give such JSON on stdin: wispctl mcp add-json ${showArg(name)} -)`);
    await keychainFirst(client, session, advice.words, advice.tail);
    if (opts.yes !== true && !(await consent(ctx, name, secrets, session))) {
      ctx.io.err('nothing added');
      process.exitCode = EXIT.refused;
      return;
    }
  }
  const content = JSON.stringify({ mcpServers: { [name]: entry } });
  const storage = session ? ('session' as const) : ('keychain' as const);
  const result = await withSessionAdvice(() => client.call('services.import', { content, file: WHERE, storage }), advice.words, advice.tail);
  const service = imported(result);
  for (const warning of result.warnings) ctx.io.err(`warning: ${clean(warning)}`);
  ctx.print(service, () => registeredText(service));
}

async function consent(ctx: CliContext, name: string, secrets: readonly string[], session: boolean): Promise<boolean> {
  const where = session ? 'in memory for this daemon run' : 'in the OS keychain';
  const noTerminal = `the JSON holds values for ${secrets.join(', ')}: pass --yes to keep them ${where}, or leave them out and set each with wispctl mcp env set / mcp header set`;
  if (stdinIsTerminal()) ctx.io.err(`The JSON holds values for ${secrets.join(', ')}.`);
  return confirm(`Keep these values ${where} for ${clean(name)}? [y/N] `, noTerminal);
}

/** The one service the import registered, or the reason it did not, as an error with its code. */
function imported(result: Result<'services.import'>): Result<'services.import'>['imported'][number] {
  const [service] = result.imported;
  if (service !== undefined) return service;
  const reason = result.skipped[0]?.reason ?? 'nothing was registered';
  const coded = /^([A-Z_]+): (.*)$/s.exec(reason);
  if (coded !== null && isErrorCode(coded[1])) throw new WispError(coded[1], coded[2] ?? reason);
  throw new WispError('INVALID_CONFIG', reason.replace(/^invalid: /, ''));
}

/** The entry, its shape checked: known keys only, and exactly one transport. */
export function checkEntry(value: unknown): Entry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new WispError('INVALID_CONFIG', 'the JSON must be one object: {"command": ..., "args": [...]} or {"type": "http", "url": ...}');
  const entry = value as Entry;
  const unknown = Object.keys(entry).filter((key) => !(KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new WispError('INVALID_CONFIG', `the JSON has ${unknown.map((k) => showArg(k)).join(', ')}: an entry takes only ${KEYS.join(', ')}`);
  const type = entry.type;
  if (type !== undefined && (typeof type !== 'string' || !(ADD_TRANSPORTS as readonly string[]).includes(type))) {
    throw new WispError('INVALID_CONFIG', `"type" ${typeof type === 'string' ? showArg(type) : 'of that kind'} is not one wispctl adds (${ADD_TRANSPORTS.slice(0, -1).join(', ')} or ${ADD_TRANSPORTS.at(-1) ?? ''})`);
  }
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  const transport = type ?? (hasUrl && !hasCommand ? 'http' : 'stdio');
  if (transport === 'stdio' && (!hasCommand || hasUrl)) throw new WispError('INVALID_CONFIG', 'a stdio entry has "command" (and "args", "env"), and no "url"');
  if (transport !== 'stdio' && (!hasUrl || hasCommand || entry.args !== undefined || entry.env !== undefined)) {
    throw new WispError('INVALID_CONFIG', `an ${transport} entry has "url" (and "headers"), and no "command", "args" or "env"`);
  }
  for (const key of ['env', 'headers'] as const) {
    const map = entry[key];
    if (map !== undefined && (typeof map !== 'object' || map === null || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string'))) {
      throw new WispError('INVALID_CONFIG', `"${key}" must map names to strings`);
    }
  }
  return entry;
}

/** `TOKEN (env)`, `Authorization (header)`: what the entry holds values for, names cleaned. */
function secretNames(entry: Entry): string[] {
  const names = (map: unknown, kind: string): string[] => (typeof map === 'object' && map !== null ? Object.keys(map).map((k) => `${clean(k)} (${kind})`) : []);
  return [...names(entry.env, 'env'), ...names(entry.headers, 'header')];
}

async function readStdin(): Promise<string> {
  if (stdinIsTerminal()) throw new WispError('INVALID_PARAMS', '- reads the JSON from stdin, which is a terminal here: pipe the JSON in (wispctl mcp add-json NAME - < entry.json)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin()) {
    size += (chunk as Buffer).length;
    if (size > MAX_JSON_BYTES) throw new WispError('LIMIT_EXCEEDED', `the JSON is larger than ${MAX_JSON_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
