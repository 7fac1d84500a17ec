import { spawn } from 'node:child_process';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { WispError } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, nonEmpty, withSessionAdvice } from '../keychain.js';
import { readSecret } from '../prompt.js';
import { headerSavedText, headersText, loggedInText, loggedOutText, loginUrlText, registeredText, secretPrompt, serviceDone } from '../render/services.js';
import { documentOutput } from '../output.js';
import { importText, sourcesText } from '../render/sources.js';
import { clean } from '../render.js';
import { IMPORT_CLIENTS, defaultWhere, readClientConfig, readImportFile, type ImportClient, type ImportSource } from './mcp-import-from.js';
import { stdinIsTerminal } from '../stdin.js';

type RemoteOptions = {
  transport?: string;
  timeoutMs?: number;
  oauth?: boolean;
  clientId?: string;
  scopes?: string;
  clientSecret?: boolean;
  privateKey?: boolean;
  signingAlg?: 'ES256' | 'ES384' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'EdDSA';
  grant?: 'client-credentials' | 'cross-app';
  clientMetadataUrl?: string;
  idpTokenEndpoint?: string;
  idpClientId?: string;
  identityAssertion?: boolean;
};

/** The OAuth part of add-remote: the flow's settings, and its secrets read without echo (or from stdin: one of them). */
async function remoteOAuth(name: string, opts: RemoteOptions, ctx: CliContext): Promise<Record<string, string> | undefined> {
  const secrets = [opts.clientSecret, opts.privateKey, opts.identityAssertion].filter((given) => given === true).length;
  const wanted = opts.oauth === true || opts.clientId !== undefined || opts.scopes !== undefined || secrets > 0 || opts.grant !== undefined || opts.clientMetadataUrl !== undefined;
  if (!wanted) return undefined;
  if (secrets > 1 && !stdinIsTerminal()) throw new WispError('INVALID_PARAMS', 'only one secret can come from stdin: run it on a terminal to be asked for each');
  const read = (flag: boolean | undefined, prompt: string): Promise<string | undefined> => (flag === true ? readSecret(prompt, ctx.io.err) : Promise.resolve(undefined));
  const clientSecret = await read(opts.clientSecret, secretPrompt.clientSecret(name));
  const privateKey = await read(opts.privateKey, `private key (PKCS#8 PEM) for ${name}, best piped on stdin (not shown): `);
  const identityAssertion = await read(opts.identityAssertion, `identity assertion (ID token) for ${name} (not shown): `);
  const given = {
    clientId: opts.clientId,
    scopes: opts.scopes,
    clientSecret,
    privateKey,
    identityAssertion,
    clientAuth: privateKey !== undefined ? 'private_key_jwt' : clientSecret !== undefined && opts.grant !== undefined ? 'client_secret_basic' : undefined,
    signingAlg: opts.signingAlg,
    grant: opts.grant === 'cross-app' ? 'cross_app' : opts.grant === 'client-credentials' ? 'client_credentials' : undefined,
    clientMetadataUrl: opts.clientMetadataUrl,
    idpTokenEndpoint: opts.idpTokenEndpoint,
    idpClientId: opts.idpClientId,
  };
  return Object.fromEntries(Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

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
    .argument('<dir>', 'the project directory (a relative one is resolved against the current directory)')
    .option('--allow-env <names>', 'variables of the daemon\'s environment its entries may read besides the public ones (comma-separated, repeatable; replaces the ones named before; \'\' names none)', collectNames)
    .addHelpText('after', ADD_PROJECT_HELP)
    .action((dir: string, opts: { allowEnv?: string[] }) =>
      ctx.withClient(async (client) => show(await client.call('sources.addProject', { directory: path.resolve(dir), ...(opts.allowEnv !== undefined ? { allowEnv: opts.allowEnv } : {}) }))),
    );

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

/** --allow-env A,B --allow-env C: every name given, in one list ('' adds none). */
function collectNames(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((n) => n.trim()).filter((n) => n !== '')];
}

const ADD_PROJECT_HELP = `
A project's .mcp.json may read, with \${VAR}, only the public variables of the daemon's
environment (HOME, USER, LOGNAME, PATH, SHELL, TERM, TMPDIR, LANG, XDG_*_HOME, ...) and the
ones you name with --allow-env; an entry reading any other is skipped (ENV_NOT_ALLOWED).
The daemon's own (DEEPSEEK_API_KEY, DEEPSEEK_*, WISP_*) are never read, whatever is named.`;

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
\${env:NAME} becomes \${NAME}, filled in from the daemon's environment at launch (a value with a
\${VAR} is kept as written; never the daemon's own DEEPSEEK_API_KEY, DEEPSEEK_*, WISP_*).`;

/** What to import: the FILE given (in any client's format), or the client's own file (--from); one of the two. */
async function importSource(file: string | undefined, from: ImportClient | undefined): Promise<ImportSource> {
  if ((file === undefined) === (from === undefined)) throw new WispError('INVALID_PARAMS', 'give a FILE or --from CLIENT (one of the two)');
  if (from !== undefined) return readClientConfig(from, defaultWhere(), process.cwd());
  return readImportFile(file ?? '');
}

/** add-remote, login, logout. */
function registerRemote(mcp: Command, ctx: CliContext): void {
  mcp
    .command('add-remote')
    .description('register a remote MCP server (streamable HTTP, or legacy HTTP+SSE with --transport sse); it is stored disabled')
    .argument('<name>', 'service name')
    .argument('<url>', 'the endpoint, e.g. https://example.com/mcp')
    .option('--timeout-ms <ms>', 'deadline for initialize + discovery, and for each tool call (100-600000)', (v) => Number(v))
    .option('--transport <kind>', 'http (streamable HTTP, the default) or sse (the legacy HTTP+SSE transport)')
    .option('--oauth', 'it uses OAuth: log in with wispctl mcp login NAME')
    .option('--client-id <id>', 'OAuth: a pre-registered client id (default: the client registers itself)')
    .option('--scopes <scopes>', 'OAuth: the scopes to ask for, space-separated')
    .option('--client-secret', 'OAuth: the pre-registered client has a secret: read it without echo (or from stdin), keep it in the keychain')
    .option('--grant <grant>', 'OAuth without a person: client-credentials, or cross-app (an identity assertion exchanged at the IdP)')
    .option('--private-key', 'OAuth: the client authenticates with a JWT signed by its key (private_key_jwt): read the PKCS#8 PEM from stdin, keep it in the keychain')
    .option('--signing-alg <alg>', 'OAuth, --private-key: the key\'s algorithm (default ES256)')
    .option('--client-metadata-url <url>', 'OAuth: an https URL of a Client ID Metadata Document you host, used as the client id where the server supports it')
    .option('--idp-token-endpoint <url>', 'OAuth, --grant cross-app: the identity provider\'s token endpoint')
    .option('--idp-client-id <id>', 'OAuth, --grant cross-app: the client id at the identity provider')
    .option('--identity-assertion', 'OAuth, --grant cross-app: read the identity assertion (ID token) without echo (or from stdin), keep it in the keychain')
    .action((name: string, url: string, opts: RemoteOptions) =>
      ctx.withClient(async (client) => {
        const transport = remoteTransport(opts.transport);
        const oauth = await remoteOAuth(name, opts, ctx);
        const { service } = await client.call('services.registerRemote', {
          name,
          url,
          ...(transport !== undefined ? { transport } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
          ...(oauth !== undefined ? { oauth } : {}),
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
    .description('log out of a remote service: stop it, revoke its refresh token at the authorization server (when it offers that), remove its tokens from the keychain')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const result = await client.call('services.logout', ref(name));
        ctx.print(result, () => loggedOutText(result.service, result.revocation));
      }),
    );
}

/** `--transport` of add-remote: http or sse, refused with the choices otherwise. */
function remoteTransport(value: string | undefined): 'http' | 'sse' | undefined {
  if (value === undefined || value === 'http' || value === 'sse') return value;
  throw new WispError('INVALID_PARAMS', `--transport must be http or sse for a remote server, not ${JSON.stringify(value.slice(0, 40))}`);
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
