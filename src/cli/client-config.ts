import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WispError } from '../core/index.js';

/**
 * The MCP clients `wispctl mcp serve --print-config` and `wispctl mcp connect-client` know:
 * where each keeps its servers, under which key, in which shape. Pure (no file I/O), so the
 * merge is tested on its own; the command (commands/connect-client.ts) reads and writes.
 */

export const CLIENT_NAMES = ['claude-desktop', 'claude-code', 'vscode', 'cursor'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

/** The name of our entry in every client's server list; with a profile, `wisp-PROFILE` (entryName). */
export const ENTRY_NAME = 'wisp';

/** The entry's name for a profile (`wisp-work`), or ENTRY_NAME: one entry per profile, side by side in one client. */
export function entryName(profile: string | undefined): string {
  return profile === undefined ? ENTRY_NAME : `${ENTRY_NAME}-${profile}`;
}

/** ~/.claude.json holds Claude Code's whole state (history, projects) and grows large; beyond this we do not load it. */
export const MAX_CLIENT_CONFIG_BYTES = 64 * 1024 * 1024;

interface ClientSpec {
  readonly label: string;
  /** The object in the file that maps server names to servers. */
  readonly key: 'mcpServers' | 'servers';
  /** Claude Code and VS Code write `"type": "stdio"` in their own entries. */
  readonly typed: boolean;
  readonly file: (where: Whereabouts) => string;
}

export interface Whereabouts {
  readonly platform: NodeJS.Platform;
  readonly env: NodeJS.ProcessEnv;
  readonly homedir: string;
}

export function currentWhereabouts(): Whereabouts {
  return { platform: process.platform, env: process.env, homedir: os.homedir() };
}

/** Electron's appData: ~/Library/Application Support on macOS, $XDG_CONFIG_HOME or ~/.config elsewhere (Claude Desktop and VS Code are Electron apps). */
function appData(where: Whereabouts): string {
  if (where.platform === 'darwin') return path.join(where.homedir, 'Library', 'Application Support');
  const xdg = where.env.XDG_CONFIG_HOME;
  return xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(where.homedir, '.config');
}

const CLIENTS: Record<ClientName, ClientSpec> = {
  'claude-desktop': {
    label: 'Claude Desktop',
    key: 'mcpServers',
    typed: false,
    file: (where) => path.join(appData(where), 'Claude', 'claude_desktop_config.json'),
  },
  'claude-code': {
    label: 'Claude Code (user scope)',
    key: 'mcpServers',
    typed: true,
    // Claude Code keeps .claude.json in CLAUDE_CONFIG_DIR when that is set, else in the home directory.
    file: (where) => {
      const dir = where.env.CLAUDE_CONFIG_DIR;
      return path.join(dir !== undefined && path.isAbsolute(dir) ? dir : where.homedir, '.claude.json');
    },
  },
  vscode: {
    label: 'VS Code (user mcp.json)',
    key: 'servers',
    typed: true,
    file: (where) => path.join(appData(where), 'Code', 'User', 'mcp.json'),
  },
  cursor: {
    label: 'Cursor (global)',
    key: 'mcpServers',
    typed: false,
    file: (where) => path.join(where.homedir, '.cursor', 'mcp.json'),
  },
};

export function isClientName(value: string): value is ClientName {
  return (CLIENT_NAMES as readonly string[]).includes(value);
}

export function parseClientName(value: string): ClientName {
  if (!isClientName(value)) throw new WispError('INVALID_PARAMS', `unknown MCP client ${JSON.stringify(value)}: give one of ${CLIENT_NAMES.join(', ')}`);
  return value;
}

export function clientLabel(name: ClientName): string {
  return CLIENTS[name].label;
}

export function clientConfigFile(name: ClientName, where: Whereabouts = currentWhereabouts()): string {
  return CLIENTS[name].file(where);
}

export function clientKey(name: ClientName): string {
  return CLIENTS[name].key;
}

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/** This package's bin/wispctl.js (dist/cli and the bundle's dist/wispctl are both two levels down). */
export function wispctlScript(): string {
  return path.join(packageRoot, 'bin', 'wispctl.js');
}

/**
 * What the client runs: `<node> <bin/wispctl.js> [--data-dir D] --socket S mcp serve [--services a,b] [--approve-in-client] [--defer-tools]`.
 * The socket is always named in the args (every client's format has args; not every one
 * passes env the same way): MCP clients start their servers without XDG_RUNTIME_DIR, where
 * the socket lives on Linux.
 */
export interface ServeCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The entry's name in the client (entryName); absent: ENTRY_NAME. */
  readonly name?: string;
}

export interface ServeChoices {
  /** The global flags that point at this daemon: --socket always, --data-dir when one was given (or WISP_HOME). */
  readonly globalFlags: readonly string[];
  readonly services?: string;
  /** `--profile NAME` (not with services). */
  readonly profile?: string;
  readonly approveInClient?: boolean;
  readonly deferTools?: boolean;
}

/**
 * core's SERVICE_NAME_PATTERN, written out: importing it moves core/patterns.js out of the
 * bundle's entry and costs every command one more file (test/integration/cli-startup.test.ts).
 * The unit test holds the two equal.
 */
export const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `--services a,b`: service names, checked here so nothing odd lands in a client's config. */
export function checkServices(list: string): string {
  const names = list.split(',').map((name) => name.trim());
  const bad = names.find((name) => !SERVICE_NAME.test(name));
  if (bad !== undefined) throw new WispError('INVALID_PARAMS', `--services: ${JSON.stringify(bad)} is not a service name (1-64 of A-Z a-z 0-9 . _ -, comma-separated)`);
  return names.join(',');
}

/** core's PROFILE_NAME_PATTERN, written out (as SERVICE_NAME is; the unit test holds the two equal). */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** `--profile NAME`: a profile name, checked here so nothing odd lands in a client's config (or its entry's name). */
export function checkProfile(name: string): string {
  if (!PROFILE_NAME.test(name)) throw new WispError('INVALID_PARAMS', `--profile: ${JSON.stringify(name)} is not a profile name (1-32 of A-Z a-z 0-9 _ -, starting with a letter or digit)`);
  return name;
}

/**
 * Absolute paths of node and of bin/wispctl.js, not a bare `wispctl`: a client started from
 * the Dock, a desktop launcher or an editor does not get the shell's PATH (nvm, Homebrew), so
 * neither `wispctl` nor the `node` its first line asks for may be found there.
 */
export function serveCommand(choices: ServeChoices, nodePath = process.execPath, script = wispctlScript()): ServeCommand {
  if (choices.profile !== undefined && choices.services !== undefined) throw new WispError('INVALID_PARAMS', '--profile goes alone: the profile names its services (not with --services)');
  const serveFlags = [
    ...(choices.services !== undefined ? ['--services', checkServices(choices.services)] : []),
    ...(choices.profile !== undefined ? ['--profile', checkProfile(choices.profile)] : []),
    ...(choices.approveInClient === true ? ['--approve-in-client'] : []),
    ...(choices.deferTools === true ? ['--defer-tools'] : []),
  ];
  return { command: nodePath, args: [script, ...choices.globalFlags, 'mcp', 'serve', ...serveFlags], ...(choices.profile !== undefined ? { name: entryName(choices.profile) } : {}) };
}

/** The entry as the client writes its own. */
export function clientEntry(name: ClientName, serve: ServeCommand): Record<string, unknown> {
  return { ...(CLIENTS[name].typed ? { type: 'stdio' } : {}), command: serve.command, args: [...serve.args] };
}

/** What a user pastes into the client's file. */
export function snippet(name: ClientName, serve: ServeCommand): Record<string, unknown> {
  return { [CLIENTS[name].key]: { [serve.name ?? ENTRY_NAME]: clientEntry(name, serve) } };
}

/** A word for a POSIX shell: as is when plainly safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Claude Code's own way to add a server: `claude mcp add --scope user wisp -- <command> <args...>`. */
export function claudeCodeCommandLine(serve: ServeCommand): string {
  return ['claude', 'mcp', 'add', '--scope', 'user', serve.name ?? ENTRY_NAME, '--', serve.command, ...serve.args].map(shellWord).join(' ');
}

/** The change connect-client makes to one file. */
export interface ConfigEdit {
  /** The new text of the file. */
  readonly text: string;
  /** The entry it replaces, or undefined when there was none. */
  readonly replaced: unknown;
}

/** The refusal: the file is left as it is, and the message says how to go on. */
export function unusableConfig(file: string, name: ClientName, problem: string): WispError {
  return new WispError(
    'CLIENT_CONFIG_INVALID',
    `${file}: ${problem}; it was not changed. Fix it (or add the entry by hand: wispctl mcp serve --print-config ${name}), then run again`,
    { path: file, problem },
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The indentation the file already uses (its first indented line), else two spaces. */
function indentOf(text: string): string {
  const match = /^\{[ \t]*\r?\n([ \t]+)\S/.exec(text);
  return match?.[1] ?? '  ';
}

/**
 * Our entry put into the file's text: the rest of the file kept (every other key and server,
 * in order; the indentation it used; its final line break). `original` undefined: no file
 * yet. Text that is not a JSON object (JSONC comments included: VS Code allows them, and
 * JSON.parse would drop them) is refused, never rewritten. `entryName`: ours (entryName()).
 */
export function editConfig(name: ClientName, file: string, original: string | undefined, entry: Record<string, unknown>, entryName: string = ENTRY_NAME): ConfigEdit {
  const key = CLIENTS[name].key;
  let root: unknown = {};
  if (original !== undefined && original.trim() !== '') {
    try {
      root = JSON.parse(original) as unknown;
    } catch (error) {
      throw unusableConfig(file, name, `it is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  if (!isPlainObject(root)) throw unusableConfig(file, name, 'it is not a JSON object');
  const servers = Object.hasOwn(root, key) ? root[key] : {};
  if (!isPlainObject(servers)) throw unusableConfig(file, name, `"${key}" is not an object`);
  const replaced = Object.hasOwn(servers, entryName) ? servers[entryName] : undefined;
  const updated = { ...root, [key]: { ...servers, [entryName]: entry } };
  const ending = original === undefined || original.trim() === '' || /\n$/.test(original) ? '\n' : '';
  return { text: `${JSON.stringify(updated, null, original === undefined ? '  ' : indentOf(original))}${ending}`, replaced };
}
