import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { WispError } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, nonEmpty, withSessionAdvice } from '../keychain.js';
import { readSecret } from '../prompt.js';
import { headerSavedText, headersText, loggedInText, loginUrlText, registeredText, secretPrompt, serviceDone } from '../render/services.js';
import { documentOutput } from '../output.js';
import { importText, sourcesText } from '../render/sources.js';
import { clean } from '../render.js';
import { IMPORT_CLIENTS, defaultWhere, readClientConfig, type ImportClient } from './mcp-import-from.js';

type RemoteOptions = { timeoutMs?: number; oauth?: boolean; clientId?: string; scopes?: string; clientSecret?: boolean };

/** wispctl mcp sources|reload|import|add-remote|login|logout|header: config files and remote servers. */
export function register(mcp: Command, ctx: CliContext): void {
  registerSources(mcp, ctx);
  registerRemote(mcp, ctx);
  registerHeaders(mcp, ctx);
}

function registerSources(mcp: Command, ctx: CliContext): void {
  const show = (view: Parameters<typeof sourcesText>[0]): void => ctx.print(view, () => sourcesText(view));
  const sources = mcp
    .command('sources')
    .description('the config sources (global settings.json, enabled plugins, project .mcp.json files) and what became of every entry')
    .action(() => ctx.withClient(async (client) => show(await client.call('sources.list'))));
  documentOutput(sources, { json: 'one object: the config dir, the projects read, and the last sync\'s report (null before the first)', fields: ['configDir', 'projects', 'report'] });

  sources
    .command('add-project')
    .description('read DIR/.mcp.json as a config source (then sync)')
    .argument('<dir>', 'the project directory')
    .action((dir: string) => ctx.withClient(async (client) => show(await client.call('sources.addProject', { directory: path.resolve(dir) }))));

  sources
    .command('remove-project')
    .description('stop reading DIR/.mcp.json (then sync: its services are removed)')
    .argument('<dir>', 'the project directory')
    .action((dir: string) => ctx.withClient(async (client) => show(await client.call('sources.removeProject', { directory: path.resolve(dir) }))));

  mcp
    .command('reload')
    .description('read the config sources again: changed entries are stopped and disabled, removed ones deleted (no hot reload otherwise)')
    .action(() => ctx.withClient(async (client) => show(await client.call('sources.reload'))));

  mcp
    .command('import')
    .description('one-off import of a Claude-Desktop-style (mcpServers) or VS Code-style (servers) file, or of a client\'s own file (--from): each entry is registered disabled')
    .argument('[file]', 'the JSON file')
    .addOption(new Option('--from <client>', 'read the file where that client keeps it on this system').choices(IMPORT_CLIENTS))
    .option('--session', 'keep env and header values in memory only (not in the keychain)')
    .addHelpText('after', IMPORT_HELP)
    .action((file: string | undefined, opts: { from?: ImportClient; session?: boolean }) =>
      ctx.withClient(async (client) => {
        const { content, file: source, warnings } = await importSource(file, opts.from);
        for (const warning of warnings) ctx.io.err(`warning: ${clean(warning)}`);
        const importFile = () => client.call('services.import', { content, file: source, storage: opts.session === true ? 'session' : 'keychain' });
        const result = await withSessionAdvice(importFile, ['mcp', 'import', ...(opts.from !== undefined ? ['--from', opts.from] : [file ?? ''])]);
        ctx.print(result, () => importText(result));
      }),
    );
}

const IMPORT_HELP = `
--from reads the file where the client keeps it:
  claude-desktop  macOS: ~/Library/Application Support/Claude/claude_desktop_config.json
                  Windows: %APPDATA%\\Claude\\claude_desktop_config.json
                  Linux (community builds): $XDG_CONFIG_HOME/Claude/claude_desktop_config.json
  claude-code     ~/.claude.json: the user-scope servers, and this directory's local-scope ones
                  (a project's .mcp.json is a config source: wispctl mcp sources add-project DIR)
  vscode          the user profile's mcp.json: ~/Library/Application Support/Code/User/mcp.json,
                  %APPDATA%\\Code\\User\\mcp.json, $XDG_CONFIG_HOME/Code/User/mcp.json
  cursor          ~/.cursor/mcp.json
\${env:NAME} becomes \${NAME}, filled in from the daemon's environment.`;

/** What to import: the FILE given, or the client's own file (--from); one of the two. */
async function importSource(file: string | undefined, from: ImportClient | undefined): Promise<{ content: string; file: string; warnings: string[] }> {
  if ((file === undefined) === (from === undefined)) throw new WispError('INVALID_PARAMS', 'give a FILE or --from CLIENT (one of the two)');
  if (from !== undefined) return readClientConfig(from, defaultWhere(), process.cwd());
  const content = await fs.readFile(file ?? '', 'utf8').catch((error: unknown) => {
    throw new WispError('INVALID_PARAMS', `cannot read ${file ?? ''}: ${(error as Error).message}`);
  });
  return { content, file: path.resolve(file ?? ''), warnings: [] };
}

/** add-remote, login, logout. */
function registerRemote(mcp: Command, ctx: CliContext): void {
  mcp
    .command('add-remote')
    .description('register a remote MCP server (streamable HTTP); it is stored disabled')
    .argument('<name>', 'service name')
    .argument('<url>', 'the endpoint, e.g. https://example.com/mcp')
    .option('--timeout-ms <ms>', 'deadline for initialize + discovery, and for each tool call (100-600000)', (v) => Number(v))
    .option('--oauth', 'it uses OAuth: log in with wispctl mcp login NAME')
    .option('--client-id <id>', 'OAuth: a pre-registered client id (default: the client registers itself)')
    .option('--scopes <scopes>', 'OAuth: the scopes to ask for, space-separated')
    .option('--client-secret', 'OAuth: the pre-registered client has a secret: read it without echo (or from stdin), keep it in the keychain')
    .action((name: string, url: string, opts: RemoteOptions) =>
      ctx.withClient(async (client) => {
        const oauth = opts.oauth === true || opts.clientId !== undefined || opts.scopes !== undefined || opts.clientSecret === true;
        const clientSecret = opts.clientSecret === true ? await readSecret(secretPrompt.clientSecret(name), ctx.io.err) : undefined;
        const { service } = await client.call('services.registerRemote', {
          name,
          url,
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
          ...(oauth
            ? {
                oauth: {
                  ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
                  ...(opts.scopes !== undefined ? { scopes: opts.scopes } : {}),
                  ...(clientSecret !== undefined ? { clientSecret } : {}),
                },
              }
            : {}),
        });
        ctx.print(service, () => registeredText(service));
      }),
    );

  mcp
    .command('login')
    .description('log in to a remote service with OAuth: prints the authorization URL (and opens a browser on a desktop), waits for the callback, then activates it')
    .argument('<name>', 'service name (or id)')
    .option('--no-browser', 'only print the URL')
    .action((name: string, opts: { browser: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        client.onEvent((event) => {
          if (event.type !== 'service.login' || event.service.id !== service.id) return;
          ctx.io.err(loginUrlText(service, event.authorizationUrl, event.redirectUri));
          if (opts.browser) openBrowser(event.authorizationUrl);
        });
        await client.call('events.subscribe', {});
        const result = await client.call('services.login', { id: service.id, configVersion: service.configVersion });
        ctx.print(result.service, () => loggedInText(result.service));
      }),
    );

  mcp
    .command('logout')
    .description('remove a remote service\'s OAuth tokens and client registration from the keychain, and stop it')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.logout', ref(name));
        ctx.print(service, () => serviceDone(service, 'logged out (tokens removed from the keychain)'));
      }),
    );
}

/** header set|list|clear. */
function registerHeaders(mcp: Command, ctx: CliContext): void {
  const header = mcp.command('header').description('a remote service\'s HTTP headers: values go to the OS keychain (or memory), never to files');

  header
    .command('set')
    .description('set one header (e.g. Authorization); the value is read without echo from the terminal, or from stdin')
    .argument('<name>', 'service name (or id)')
    .argument('<header>', 'header name')
    .option('--session', 'keep the value in memory only, for this daemon run')
    .action((name: string, headerName: string, opts: { session?: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        const words = ['mcp', 'header', 'set', service.name, headerName];
        await keychainFirst(client, opts.session === true, words);
        const value = nonEmpty(await readSecret(secretPrompt.header(service, headerName), ctx.io.err), `the value of ${headerName}`);
        const setHeaders = () =>
          client.call('services.setHeaders', { id: service.id, mode: 'upsert', headers: [{ name: headerName, value, storage: opts.session === true ? 'session' : 'keychain' }] });
        const result = await withSessionAdvice(setHeaders, words);
        ctx.print(result.service.headers, () => headerSavedText(result.service, headerName, opts.session === true));
      }),
    );

  const list = header
    .command('list')
    .description('header names and where each value is kept (values are never shown)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        ctx.print(service.headers, () => headersText(service.headers));
      }),
    );
  documentOutput(list, { json: 'an array of headers (never their values)', fields: ['name', 'storage'] });

  header
    .command('clear')
    .description('remove every header of a remote service')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        const result = await client.call('services.setHeaders', { id: service.id, mode: 'replace', headers: [] });
        ctx.print(result.service.headers, () => serviceDone(result.service, 'headers cleared'));
      }),
    );
}

/** Opens the URL in the desktop's browser, where there is a desktop; never through a shell. */
function openBrowser(url: string): void {
  const desktop = process.platform === 'darwin' || (process.env.DISPLAY ?? '') !== '' || (process.env.WAYLAND_DISPLAY ?? '') !== '';
  if (!desktop) return;
  // The URL comes from the authorization server's metadata: untrusted. Only http(s) URLs are
  // handed to the opener (never file:, javascript: or a custom scheme handler), in their
  // parsed, normalised form (which cannot start with '-' and be read as an option).
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return;
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(opener, [parsed.href], { stdio: 'ignore', detached: true, shell: false });
  child.on('error', () => undefined);
  child.unref();
}
