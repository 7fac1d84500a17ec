import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { CommanderError, type Command } from 'commander';
import { EXIT, WispError } from '../../core/index.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import {
  CLIENT_NAMES,
  ENTRY_NAME,
  MAX_CLIENT_CONFIG_BYTES,
  claudeCodeCommandLine,
  clientConfigFile,
  clientEntry,
  clientKey,
  clientLabel,
  editConfig,
  parseClientName,
  serveCommand,
  snippet,
  type ClientName,
  type ServeCommand,
  unusableConfig,
} from '../client-config.js';
import type { CliContext } from '../context.js';
import { findProfile } from './mcp-profile.js';
import { confirm } from '../prompt.js';
import { jsonForTerminal } from '../render.js';

/**
 * One-line setup of the MCP clients people already use: `wispctl mcp serve --print-config
 * CLIENT` prints what to paste, `wispctl mcp connect-client CLIENT` writes it into the
 * client's own config file (shown first, asked, a backup kept, the rest of the file kept).
 */

type ServeOptions = { printConfig?: string; services?: string | string[]; profile?: string; approveInClient?: boolean; deferTools?: boolean };
type ConnectOptions = { yes?: boolean; services?: string; profile?: string; approveInClient?: boolean; deferTools?: boolean };

/** `mcp serve --print-config` and `mcp connect-client`; `serve` itself is the gateway's (registered before this). */
export function register(mcp: Command, ctx: CliContext): void {
  registerPrintConfig(mcp, ctx);
  mcp
    .command('connect-client')
    .description(`add Wisp to an MCP client's config file (${CLIENT_NAMES.join(', ')}): shows the change, asks, keeps a backup`)
    .argument('<client>', CLIENT_NAMES.join(' | '))
    .option('-y, --yes', 'do not ask (for scripts)')
    .option('--services <list>', 'expose only these services (comma-separated), as mcp serve --services')
    .option('--profile <name>', 'expose only the services of this profile, as mcp serve --profile; the entry is named wisp-NAME (beside a plain wisp entry)')
    .option('--approve-in-client', 'also offer approvals to the client, as mcp serve --approve-in-client')
    .option('--defer-tools', 'offer search and execute instead of the tool list, as mcp serve --defer-tools')
    .addHelpText(
      'after',
      '\nThe client runs <node> <bin/wispctl.js> --socket <socket> mcp serve: absolute paths, since a client\nstarted from a launcher does not get your shell\'s PATH (nor XDG_RUNTIME_DIR, where the socket is on\nLinux). Run it again after moving or upgrading node, or moving the daemon\'s socket.',
    )
    .action((name: string, opts: ConnectOptions) => connectClient(ctx, parseClientName(name), opts));
}

/** The options of `serve` that go into the client's command as they are. */
function servicesOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

function command(ctx: CliContext, opts: { services?: string | string[]; profile?: string; approveInClient?: boolean; deferTools?: boolean }): ServeCommand {
  const services = servicesOf(opts.services);
  return serveCommand({
    globalFlags: ctx.clientFlags(),
    ...(services !== undefined ? { services } : {}),
    ...(opts.profile !== undefined ? { profile: opts.profile } : {}),
    ...(opts.approveInClient === true ? { approveInClient: true } : {}),
    ...(opts.deferTools === true ? { deferTools: true } : {}),
  });
}

/**
 * --print-config on the gateway's `serve` command: printed before its action runs, which is
 * then skipped (a CommanderError with status 0 ends the program quietly). Before the gateway
 * exists, `serve` here knows only --print-config.
 */
function registerPrintConfig(mcp: Command, ctx: CliContext): void {
  let serve = mcp.commands.find((cmd) => cmd.name() === 'serve');
  if (serve === undefined) {
    serve = mcp.command('serve').description('serve Wisp\'s tools to MCP clients (only --print-config is available in this build)');
    serve.action(() => {
      throw new WispError('INVALID_PARAMS', 'this build of wispctl has no MCP gateway yet: only --print-config is available');
    });
  }
  serve.option('--print-config <client>', `print the config snippet for ${CLIENT_NAMES.join(' | ')} and exit`);
  serve.hook('preAction', (cmd) => {
    const opts = cmd.opts<ServeOptions>();
    if (opts.printConfig === undefined) return;
    printConfig(ctx, parseClientName(opts.printConfig), command(ctx, opts));
    throw new CommanderError(EXIT.ok, 'wispctl.printedConfig', '');
  });
}

function printConfig(ctx: CliContext, name: ClientName, serve: ServeCommand): void {
  const file = clientConfigFile(name);
  const value = { client: name, configFile: file, key: clientKey(name), name: serve.name ?? ENTRY_NAME, entry: clientEntry(name, serve) };
  ctx.print(value, () => (name === 'claude-code' ? claudeCodeCommandLine(serve) : jsonForTerminal(snippet(name, serve), 2)));
  if (!ctx.json()) ctx.io.err(name === 'claude-code' ? `(or: wispctl mcp connect-client ${name}, which writes it into ${file})` : `(in ${file}, or: wispctl mcp connect-client ${name})`);
}

/** What is in the file now: its text, the real path to write (through a symlink) and its mode. */
interface Current {
  readonly target: string;
  readonly text: string | undefined;
  /** The bytes as read, for the backup. */
  readonly bytes: Buffer | undefined;
  readonly mode: number;
}

/**
 * Reads the client's file. A symlink (a dotfiles checkout) is followed, so the link stays
 * and its target is what changes. Opened without blocking (a FIFO is refused, not waited
 * on), checked on the descriptor: a regular file of this user's, at most the size cap.
 */
async function readCurrent(file: string, name: ClientName): Promise<Current> {
  let target = file;
  try {
    if ((await fs.lstat(file)).isSymbolicLink()) target = await fs.realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { target: file, text: undefined, bytes: undefined, mode: 0o600 };
    throw error;
  }
  const handle = await fs.open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw unusableConfig(file, name, 'it is not a regular file');
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) throw unusableConfig(file, name, `it belongs to uid ${stat.uid}, not to you`);
    if (stat.size > MAX_CLIENT_CONFIG_BYTES) throw unusableConfig(file, name, `it is larger than ${MAX_CLIENT_CONFIG_BYTES / 1024 / 1024} MB`);
    const bytes = await handle.readFile();
    if (bytes.length > MAX_CLIENT_CONFIG_BYTES) throw unusableConfig(file, name, `it is larger than ${MAX_CLIENT_CONFIG_BYTES / 1024 / 1024} MB`);
    return { target, text: bytes.toString('utf8'), bytes, mode: stat.mode & 0o777 };
  } finally {
    await handle.close();
  }
}

/** The change, as connect-client shows it before asking. */
function changeText(name: ClientName, file: string, current: Current, entry: Record<string, unknown>, replaced: unknown, entryName: string): string {
  const at = `${clientKey(name)}.${entryName}`;
  const indent = (json: string): string => json.split('\n').join('\n    ');
  const lines = [`${clientLabel(name)}: ${file}${current.target !== file ? ` (a symlink to ${current.target})` : ''}${current.text === undefined ? ' (a new file)' : ''}`];
  if (replaced !== undefined) lines.push(`  - ${at} (the entry there now, replaced):`, `    ${indent(jsonForTerminal(replaced, 2))}`);
  lines.push(`  + ${at}:`, `    ${indent(jsonForTerminal(entry, 2))}`);
  if (current.text === undefined) lines.push('  (nothing else in it)');
  else lines.push('  (everything else in the file is kept)', `  (the file as it is now is kept in ${backupOf(current.target)})`);
  return lines.join('\n');
}

/** A profile the daemon does not have is refused (PROFILE_NOT_FOUND) while one answers; without a daemon it is written as given. */
async function checkProfile(ctx: CliContext, profile: string): Promise<void> {
  try {
    await ctx.withClient((client) => findProfile(client, profile));
  } catch (error) {
    if (!(error instanceof WispError && error.code === 'DAEMON_NOT_RUNNING')) throw error;
    ctx.io.err(`(no daemon answers, so the profile ${profile} was not checked: mcp serve --profile ${profile} refuses to start if the daemon has no such profile)`);
  }
}

async function connectClient(ctx: CliContext, name: ClientName, opts: ConnectOptions): Promise<void> {
  const file = clientConfigFile(name);
  const serve = command(ctx, opts);
  if (opts.profile !== undefined) await checkProfile(ctx, opts.profile);
  const entryName = serve.name ?? ENTRY_NAME;
  const entry = clientEntry(name, serve);
  let current = await readCurrent(file, name);
  let edit = editConfig(name, file, current.text, entry, entryName);
  if (opts.yes !== true) {
    ctx.io.err(changeText(name, file, current, entry, edit.replaced, entryName));
    if (!(await confirm(`Write this to ${file}? [y/N] `, 'not a terminal, so nobody can confirm: pass --yes to write it'))) {
      ctx.io.err(`not changed: ${file}`);
      process.exitCode = EXIT.refused;
      return;
    }
    // The client may have written its file while we asked (Claude Code rewrites ~/.claude.json
    // often): our entry goes into the file as it is now, so nothing it wrote is lost.
    const now = await readCurrent(file, name);
    if (now.text !== current.text || now.target !== current.target) {
      current = now;
      edit = editConfig(name, file, current.text, entry, entryName);
    }
  }
  const backup = await writeChange(current, edit.text);
  const result = { client: name, configFile: file, written: current.target, backup, replaced: edit.replaced !== undefined, name: entryName, entry };
  ctx.print(result, () =>
    [
      `${edit.replaced !== undefined ? 'replaced' : 'added'} ${clientKey(name)}.${entryName} in ${file}`,
      ...(backup !== null ? [`the file as it was: ${backup}`] : []),
      `restart ${clientLabel(name).replace(/ \(.*\)$/, '')} (or reload its MCP servers) to use it`,
    ].join('\n'),
  );
}

function backupOf(target: string): string {
  return `${target}.wisp-backup`;
}

/** The backup first (private: client configs hold other servers' keys), then the file, each replaced atomically. */
async function writeChange(current: Current, text: string): Promise<string | null> {
  await fs.mkdir(path.dirname(current.target), { recursive: true, mode: 0o700 });
  let backup: string | null = null;
  if (current.bytes !== undefined) {
    backup = backupOf(current.target);
    await writeFileAtomic(backup, current.bytes, 0o600);
  }
  await writeFileAtomic(current.target, text, current.mode);
  return backup;
}
