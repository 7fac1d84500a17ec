import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WispError, stripJsonComments } from '../../core/index.js';
import { showArg } from '../render.js';

/**
 * `wispctl mcp import --from CLIENT`: where each client keeps its MCP servers, per OS, and
 * how its file is read. The file is the user's own, but what it says is untrusted: only its
 * server map is sent, and the daemon checks every entry as it does for any import.
 *
 *   claude-desktop  macOS ~/Library/Application Support/Claude/claude_desktop_config.json,
 *                   Windows %APPDATA%\Claude\claude_desktop_config.json; Linux has no official
 *                   build: $XDG_CONFIG_HOME/Claude/claude_desktop_config.json, where the
 *                   community builds keep it (mcpServers)
 *   claude-code     ~/.claude.json: mcpServers (user scope), and the entries of the current
 *                   directory's project (local scope, projects[DIR].mcpServers), which win
 *   vscode          the user profile's mcp.json: ~/Library/Application Support/Code/User,
 *                   %APPDATA%\Code\User, $XDG_CONFIG_HOME/Code/User (servers; comments allowed)
 *   cursor          ~/.cursor/mcp.json (mcpServers)
 */

export const IMPORT_CLIENTS = ['claude-desktop', 'claude-code', 'vscode', 'cursor'] as const;
export type ImportClient = (typeof IMPORT_CLIENTS)[number];

/** ~/.claude.json holds a whole history besides its servers: read up to this much. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

const LABELS: Record<ImportClient, string> = { 'claude-desktop': 'Claude Desktop', 'claude-code': 'Claude Code', vscode: 'VS Code', cursor: 'Cursor' };

export interface Where {
  readonly platform: NodeJS.Platform;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
}

function appData(where: Where): string {
  return where.env.APPDATA ?? path.join(where.home, 'AppData', 'Roaming');
}

function configHome(where: Where): string {
  const xdg = where.env.XDG_CONFIG_HOME;
  return xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(where.home, '.config');
}

/** The client's file on this OS. */
export function clientFile(client: ImportClient, where: Where): string {
  const mac = path.join(where.home, 'Library', 'Application Support');
  switch (client) {
    case 'claude-desktop':
      if (where.platform === 'darwin') return path.join(mac, 'Claude', 'claude_desktop_config.json');
      if (where.platform === 'win32') return path.join(appData(where), 'Claude', 'claude_desktop_config.json');
      return path.join(configHome(where), 'Claude', 'claude_desktop_config.json');
    case 'claude-code':
      return path.join(where.home, '.claude.json');
    case 'vscode':
      if (where.platform === 'darwin') return path.join(mac, 'Code', 'User', 'mcp.json');
      if (where.platform === 'win32') return path.join(appData(where), 'Code', 'User', 'mcp.json');
      return path.join(configHome(where), 'Code', 'User', 'mcp.json');
    case 'cursor':
      return path.join(where.home, '.cursor', 'mcp.json');
  }
}

type Servers = Record<string, unknown>;

function objectAt(value: unknown, key: string): Servers | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Servers) : undefined;
}

/** The servers the client's file names, as one mcpServers map. */
export function serversOf(client: ImportClient, doc: unknown, cwd: string): Servers | undefined {
  if (client === 'vscode') return objectAt(doc, 'servers') ?? objectAt(objectAt(doc, 'mcp'), 'servers');
  if (client !== 'claude-code') return objectAt(doc, 'mcpServers');
  const user = objectAt(doc, 'mcpServers');
  const local = objectAt(objectAt(objectAt(doc, 'projects'), cwd), 'mcpServers');
  if (user === undefined && local === undefined) return undefined;
  return { ...user, ...local };
}

/**
 * `${env:NAME}` (VS Code's and Cursor's form) becomes `${NAME}`, the form the daemon fills in
 * from its environment; `${input:...}` has no equivalent and is reported.
 */
function translate(servers: Servers): { servers: Servers; warnings: string[] } {
  const warnings: string[] = [];
  const text = JSON.stringify(servers).replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1}');
  const translated = JSON.parse(text) as Servers;
  for (const [name, entry] of Object.entries(translated)) {
    if (JSON.stringify(entry).includes('${input:')) warnings.push(`${name} uses \${input:...}, which wispctl does not ask for: the text is kept as it is; set the value with wispctl mcp env set ${name} VAR (or mcp header set)`);
  }
  return { servers: translated, warnings };
}

/** The client's file, read: what to send to services.import, and what to warn about. */
export async function readClientConfig(client: ImportClient, where: Where, cwd: string): Promise<ImportSource> {
  const file = clientFile(client, where);
  const raw = await readText(file, (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return new WispError('INVALID_PARAMS', `no ${LABELS[client]} config at ${showArg(file)} (where ${LABELS[client]} keeps it on this system); give the file instead: wispctl mcp import FILE`);
    }
    return new WispError('INVALID_PARAMS', `cannot read ${showArg(file)}: ${(error as Error).message}`);
  });
  const doc = parse(file, client === 'vscode' || client === 'cursor' ? stripJsonComments(raw) : raw);
  const servers = serversOf(client, doc, cwd);
  if (servers === undefined) throw new WispError('INVALID_PARAMS', `${showArg(file)} names no MCP servers (no ${client === 'vscode' ? 'servers' : 'mcpServers'} object)`);
  return importable(file, servers);
}

/**
 * A FILE given to `mcp import`: any of the clients' formats, read as --from reads them. JSON
 * with comments and trailing commas (VS Code's mcp.json), the servers under `mcpServers`
 * (Claude Desktop, Claude Code, Cursor), `servers` (VS Code's mcp.json) or `mcp.servers`
 * (VS Code's settings.json); `${env:NAME}` translated, `${input:...}` reported.
 */
export async function readImportFile(given: string): Promise<ImportSource> {
  const file = path.resolve(given);
  const raw = await readText(file, (error) => new WispError('INVALID_PARAMS', `cannot read ${showArg(given)}: ${(error as Error).message}`));
  const doc = parse(file, stripJsonComments(raw));
  const servers = objectAt(doc, 'mcpServers') ?? serversOf('vscode', doc, '');
  if (servers === undefined) throw new WispError('INVALID_PARAMS', `${showArg(file)} names no MCP servers (no mcpServers or servers object)`);
  return importable(file, servers);
}

export interface ImportSource {
  readonly file: string;
  readonly content: string;
  readonly warnings: string[];
}

async function readText(file: string, refused: (error: unknown) => WispError): Promise<string> {
  const handle = await fs.open(file, 'r').catch((error: unknown) => {
    throw refused(error);
  });
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) throw new WispError('LIMIT_EXCEEDED', `${showArg(file)} is larger than ${MAX_FILE_BYTES} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

function parse(file: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new WispError('INVALID_PARAMS', `${showArg(file)} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Only the server map is sent, as one mcpServers object: the rest of the file (a whole history, for ~/.claude.json) stays here. */
function importable(file: string, servers: Servers): ImportSource {
  const { servers: translated, warnings } = translate(servers);
  return { file, content: JSON.stringify({ mcpServers: translated }), warnings };
}

export function defaultWhere(): Where {
  return { platform: process.platform, home: os.homedir(), env: process.env };
}
