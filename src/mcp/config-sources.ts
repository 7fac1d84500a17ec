import { LIMITS, SERVICE_NAME_PATTERN, WispError, type ErrorCode, type ServiceTransport } from '../core/index.js';
import { environmentReads, isSecretVariable, refusedReads, type SourceTrust, type TemplatedLaunch } from './env-rules.js';
import { ID_SHAPED_NAME, isIdShaped, nameKey } from './service-names.js';
import { canonicalJson, sha256Hex } from '../util/index.js';
import { isWispGateway, selfGatewayError } from './self-gateway.js';

/**
 * The three config sources of the CLI chapter (an `mcpServers` map in each), merged:
 * global -> enabled plugins -> projects. Pure: files are read elsewhere, and the result is
 * synced into the registry by the daemon. Every decision is reported (what an entry
 * overrides, why one was skipped, each warning), because `wispctl mcp sources` shows it.
 */

export type SourceKind = 'global' | 'plugin' | 'project';

export interface SourceFile {
  readonly kind: SourceKind;
  /** The file the entries come from (shown to the user). */
  readonly file: string;
  /** For a plugin: its name (entries are namespaced by it). */
  readonly plugin?: string;
  /** For a project or a plugin: its directory (the servers' working directory). */
  readonly directory?: string;
  /** For a project: the variables of the daemon's environment the user named for it (besides the public ones). */
  readonly allowEnv?: readonly string[];
  /** The parsed JSON, or why it could not be used. */
  readonly content: SourceContent;
}

/**
 * A source file's content: parsed, not there (`absent`: its entries are gone, and so are
 * their services), or unusable (`unusable`: not the user's own file, unreadable, not JSON, not
 * an object): then nothing in it is used, and the services it gave before are kept as they
 * were, neither updated nor removed, until it can be read again. Another user who can write
 * a project directory must not be able to remove, change or block anything by planting a
 * file there.
 */
export type SourceContent =
  | { readonly json: unknown }
  | { readonly error: string; readonly absent: true }
  | { readonly error: string; readonly unusable: SourceProblemCode };

/** UNSAFE_FILE: not the user's own (another owner, writable by group or others, a symlink); INVALID_CONFIG: unreadable, too large, not JSON, not the expected shape. */
export type SourceProblemCode = 'UNSAFE_FILE' | 'INVALID_CONFIG';

/** A whole file (or directory) of the sources that could not be used. */
export interface SourceProblem {
  readonly file: string;
  readonly message: string;
  /** Set when the file is there but unusable; absent when it is simply missing. */
  readonly code?: SourceProblemCode;
}

export interface EntryOrigin {
  readonly source: SourceKind;
  readonly file: string;
  readonly plugin: string | null;
}

export interface SourceEntry {
  /** The service name: the entry's key, or `<plugin>.<key>` for a plugin entry. */
  readonly name: string;
  readonly key: string;
  readonly origin: EntryOrigin;
  readonly transport: ServiceTransport;
  /** As written, `${VAR}` templates kept: the values are taken from the daemon's environment at launch only. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string | null;
  /** The daemon environment variables the templates in command, args and url refer to. */
  readonly fromEnvironment: readonly string[];
  /** Values written without a `${VAR}`: secrets, never persisted in the registry. */
  readonly env: Readonly<Record<string, string>>;
  /** Values written with a `${VAR}`: kept as written (like args), filled in at launch only. */
  readonly envTemplates: Readonly<Record<string, string>>;
  /** As written (templates kept), like command and args. */
  readonly url: string | null;
  /** Header values written without a `${VAR}`: secrets too. */
  readonly headers: Readonly<Record<string, string>>;
  /** Header values written with a `${VAR}`: kept as written, filled in at launch only. */
  readonly headerTemplates: Readonly<Record<string, string>>;
  readonly oauth: OAuthSetting | null;
  /** Digest of everything but the secret values (their names are in it). */
  readonly digest: string;
  readonly warnings: readonly string[];
  /** The entry this one replaced (a project entry over a global one of the same name). */
  readonly overrides: EntryOrigin | null;
}

export interface OAuthSetting {
  readonly enabled: boolean;
  readonly clientId: string | null;
  readonly scopes: string | null;
}

export interface SkippedEntry {
  readonly name: string;
  readonly origin: EntryOrigin;
  readonly reason: string;
  /** A catalog code when the refusal has one (ENV_NOT_ALLOWED). */
  readonly code?: ErrorCode;
}

export interface MergeResult {
  readonly entries: SourceEntry[];
  readonly skipped: SkippedEntry[];
  /** Whole files that could not be used. */
  readonly problems: SourceProblem[];
}

// `${VAR}`, `${env:VAR}` (VS Code's and Cursor's form, the same variable) and `${VAR:-default}`.
const VAR = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const NAME = new RegExp(SERVICE_NAME_PATTERN);

/** `${VAR}` and `${VAR:-default}` from `env`; an unset variable (with no default) becomes empty and is reported. */
export function expand(text: string, env: Readonly<Record<string, string | undefined>>, unset: (name: string) => void): string {
  return text.replace(VAR, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
    if (value === undefined) {
      unset(name);
      return '';
    }
    return value;
  });
}

/** The variable names `${VAR}` templates in `text` refer to. */
export function templateNames(text: string): string[] {
  return [...text.matchAll(VAR)].map((m) => m[1] ?? '').filter((name) => name !== '');
}

export interface LaunchExpansion<T> {
  /** Command, args and url with their `${VAR}`s filled in (for the names in fromEnvironment only). */
  readonly config: T;
  /** The env and header values written with a `${VAR}`, filled in. */
  readonly env: Record<string, string>;
  readonly headers: Record<string, string>;
  /** The values of secret variables taken: for the redactor (public ones are not secrets). */
  readonly secrets: { name: string; value: string }[];
}

/**
 * A service as it is launched: `${VAR}` in its command, args and url expanded from the
 * daemon's environment, for the names its configuration says come from there (nothing
 * else there is ever expanded), and its env and header templates filled in. Refused
 * (ENV_NOT_ALLOWED) when any names a variable of the daemon's own: whatever the registry
 * says, the model key never reaches a server. Kept in memory only, never stored.
 */
export function expandLaunch<T extends TemplatedLaunch>(config: T, env: Readonly<Record<string, string | undefined>>): LaunchExpansion<T> {
  const refused = refusedReads(environmentReads(config), { kind: 'own' });
  if (refused !== null) throw refused;
  const names = new Set(config.fromEnvironment ?? []);
  const secrets = new Map<string, string>();
  const fill =
    (only: ReadonlySet<string> | null) =>
    (text: string): string =>
      text.replace(VAR, (match, name: string, fallback: string | undefined) => {
        if (only !== null && !only.has(name)) return match;
        const value = env[name];
        if (value !== undefined && value !== '' && isSecretVariable(name)) secrets.set(name, value);
        if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
        return value ?? '';
      });
  const x = fill(names);
  const all = fill(null);
  const expanded =
    names.size === 0 ? config : { ...config, command: x(config.command), args: config.args.map(x), ...(typeof config.url === 'string' ? { url: x(config.url) } : {}) };
  const filled = (templates: TemplatedLaunch['envTemplates']): Record<string, string> => Object.fromEntries((templates ?? []).map((t) => [t.name, all(t.template)]));
  return { config: expanded, env: filled(config.envTemplates), headers: filled(config.headerTemplates), secrets: [...secrets].map(([name, value]) => ({ name, value })) };
}

/** Whether a value is written with a `${VAR}` (then it is a template, kept as written). */
export function hasTemplate(text: string): boolean {
  return templateNames(text).length > 0;
}

/**
 * Why a readable file cannot be used at all (not a JSON object, its mcpServers not an
 * object), or null. For `sources.addProject`, which refuses such a file before it is
 * recorded, as well as for the merge.
 */
export function fileProblem(file: SourceFile): SourceProblem | null {
  if ('absent' in file.content) return { file: file.file, message: file.content.error };
  if ('unusable' in file.content) return { file: file.file, message: file.content.error, code: file.content.unusable };
  const servers = serversOf(file.content.json, file.kind);
  return typeof servers === 'string' ? { file: file.file, message: servers, code: 'INVALID_CONFIG' } : null;
}

/** The `mcpServers` map of a file: at the top level, or under `config` (global settings). */
function serversOf(json: unknown, kind: SourceKind): Record<string, unknown> | string {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'not a JSON object';
  const doc = json as Record<string, unknown>;
  const config: unknown = doc.config;
  const servers = doc.mcpServers ?? (kind === 'global' && typeof config === 'object' && config !== null ? (config as Record<string, unknown>).mcpServers : undefined);
  if (servers === undefined) return {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) return 'mcpServers is not an object';
  return servers as Record<string, unknown>;
}

const isStringMap = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');

/** An entry's `oauth` setting, checked (null when absent); a string is why it is invalid. */
function readOAuth(raw: unknown): OAuthSetting | null | string {
  if (raw === undefined) return null;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'oauth must be an object';
  const o = raw as Record<string, unknown>;
  if (o.enabled !== undefined && typeof o.enabled !== 'boolean') return 'oauth.enabled must be true or false';
  if (o.clientId !== undefined && typeof o.clientId !== 'string') return 'oauth.clientId must be a string';
  if (o.scopes !== undefined && typeof o.scopes !== 'string' && !(Array.isArray(o.scopes) && o.scopes.every((s) => typeof s === 'string'))) {
    return 'oauth.scopes must be a string or an array of strings';
  }
  return {
    enabled: o.enabled !== false,
    clientId: typeof o.clientId === 'string' ? o.clientId : null,
    scopes: Array.isArray(o.scopes) ? (o.scopes).join(' ') : typeof o.scopes === 'string' ? o.scopes : null,
  };
}

/**
 * The transport an entry names with `type` (VS Code, Claude Code), or the one its fields
 * imply: a command runs as stdio, a url as streamable HTTP unless `type` says "sse" (the
 * legacy HTTP+SSE transport, which a streamable-HTTP client cannot talk to). An unknown
 * type is refused rather than guessed.
 */
function readTransport(type: unknown, hasCommand: boolean): { transport: ServiceTransport } | { invalid: string } {
  if (type === undefined) return { transport: hasCommand ? 'stdio' : 'http' };
  if (typeof type !== 'string') return { invalid: 'type must be a string (stdio, http or sse)' };
  const kind = type.toLowerCase();
  if (kind === 'stdio') return hasCommand ? { transport: 'stdio' } : { invalid: 'type is "stdio" but the entry has no command' };
  if (kind === 'http' || kind === 'streamable-http' || kind === 'streamablehttp' || kind === 'sse') {
    if (hasCommand) return { invalid: `type is ${JSON.stringify(type.slice(0, 40))} but the entry has a command (a remote entry has a url)` };
    return { transport: kind === 'sse' ? 'sse' : 'http' };
  }
  return { invalid: `type ${JSON.stringify(type.slice(0, 40))} is not one of stdio, http, sse` };
}

/** Why an entry's env or headers are unusable, or null. */
function mapsProblem(entry: Record<string, unknown>): string | null {
  if (entry.env !== undefined && !isStringMap(entry.env)) return 'env must map variable names to strings';
  if (entry.headers !== undefined && !isStringMap(entry.headers)) return 'headers must map header names to strings';
  if (isStringMap(entry.env)) {
    const bad = Object.keys(entry.env).find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
    if (bad !== undefined) return `env has an invalid variable name ${JSON.stringify(bad)}`;
    if (Object.keys(entry.env).length > LIMITS.maxEnvVars) return `env has more than ${LIMITS.maxEnvVars} variables`;
  }
  if (isStringMap(entry.headers)) {
    const bad = Object.keys(entry.headers).find((n) => !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(n));
    if (bad !== undefined) return `headers has an invalid header name ${JSON.stringify(bad)}`;
  }
  return null;
}

/** One entry, checked and expanded; a string is why it is invalid. */
function readEntry(
  key: string,
  raw: unknown,
  file: SourceFile,
  env: Readonly<Record<string, string | undefined>>,
): Omit<SourceEntry, 'overrides'> | string | WispError {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'the entry is not an object';
  const entry = raw as Record<string, unknown>;
  const name = file.kind === 'plugin' ? `${file.plugin ?? 'plugin'}.${key}` : key;
  if (!NAME.test(name)) return `"${name}" is not a valid service name (1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)`;
  if (isIdShaped(name)) return `"${name}" ${ID_SHAPED_NAME}`;
  const warnings: string[] = [];
  const where = `entry "${key}" in ${file.file}`;
  const unsetVars = new Set<string>();
  const x = (text: string): string => expand(text, env, (v) => unsetVars.add(v));

  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (!hasCommand && !hasUrl) return 'it has neither command (stdio) nor url (streamable HTTP)';
  if (hasCommand && hasUrl) warnings.push(`${where} has both command and url: it runs as stdio and the url is ignored`);
  if (hasCommand && (typeof entry.command !== 'string' || entry.command === '')) return 'command must be a non-empty string';
  if (entry.args !== undefined && (!Array.isArray(entry.args) || !entry.args.every((a) => typeof a === 'string'))) return 'args must be an array of strings';
  const maps = mapsProblem(entry);
  if (maps !== null) return maps;
  const oauth = readOAuth(entry.oauth);
  if (typeof oauth === 'string') return oauth;
  const named = readTransport(entry.type, hasCommand);
  if ('invalid' in named) return named.invalid;
  const transport = named.transport;

  // Command, args and url keep their templates: the daemon's own environment must never
  // reach a file, an event or a prompt. They are expanded here only to check them.
  const command = transport === 'stdio' ? (entry.command as string) : '';
  const args: string[] = transport === 'stdio' ? ((entry.args) ?? []) : [];
  const url = transport !== 'stdio' ? String(entry.url) : null;
  // Wisp's own gateway is a client of the daemon, never a server for it (a loop otherwise).
  if (transport === 'stdio' && isWispGateway({ command, args })) return selfGatewayError(name, 'skipped');
  const fromEnvironment = [...new Set([command, ...args, url ?? ''].flatMap(templateNames))].sort();
  // Both checked by mapsProblem: maps of strings.
  const [envValues, envTemplates] = splitTemplates(transport === 'stdio' ? ((entry.env ?? {}) as Record<string, string>) : {});
  const [headers, headerTemplates] = splitTemplates(transport !== 'stdio' ? ((entry.headers ?? {}) as Record<string, string>) : {});
  const refused = refusedReads(environmentReads({ command, args, url, fromEnvironment, envTemplates: asList(envTemplates), headerTemplates: asList(headerTemplates) }), trustOf(file));
  if (refused !== null) return refused;
  const expandedUrl = url === null ? null : x(url);
  if (transport === 'stdio' && x(command) === '') return 'command is empty after ${VAR} expansion';
  for (const arg of args) x(arg);
  for (const template of [...Object.values(envTemplates), ...Object.values(headerTemplates)]) x(template);
  if (url !== null && (!/^https?:\/\/[^\s]+$/.test(expandedUrl ?? '') || !/^https?:\/\//.test(url))) {
    return `url ${JSON.stringify(url)} is not an http(s) URL (a \${VAR} may fill in its host or path, not its scheme)`;
  }
  for (const v of [...unsetVars].sort()) warnings.push(`\${${v}} is not set (${where}): it became an empty string`);
  if (entry.envFile !== undefined) warnings.push(envFileWarning(name, where, entry.envFile));
  const cwd = file.directory ?? null;
  const digest = entryDigest({ transport, command, args, cwd, env: envValues, url, headers, oauth, fromEnvironment, envTemplates, headerTemplates });
  return {
    name,
    key,
    origin: { source: file.kind, file: file.file, plugin: file.plugin ?? null },
    transport,
    command,
    args,
    cwd,
    fromEnvironment,
    env: envValues,
    envTemplates,
    url,
    headers,
    headerTemplates,
    oauth,
    digest,
    warnings,
  };
}

/**
 * VS Code's `envFile` (a dotenv file whose variables the server gets) is never read: a file
 * of variables, written by whoever wrote the entry, is just what the `${VAR}` rules keep
 * from a server. Said, so that no one believes those variables are set.
 */
function envFileWarning(name: string, where: string, envFile: unknown): string {
  const shown = typeof envFile === 'string' ? JSON.stringify(envFile.slice(0, 200)) : 'given';
  return `${where} has envFile ${shown}: Wisp does not read env files, so none of its variables are set for ${name}; set each one the server needs with wispctl mcp env set ${name} VAR (or write it in the entry's env)`;
}

/** Digest of everything but the secret values (their names are in it). */
function entryDigest(e: Pick<SourceEntry, 'transport' | 'command' | 'args' | 'cwd' | 'env' | 'url' | 'headers' | 'oauth' | 'fromEnvironment' | 'envTemplates' | 'headerTemplates'>): string {
  const { transport, command, args, cwd, url, oauth, fromEnvironment, envTemplates, headerTemplates } = e;
  return sha256Hex(
    canonicalJson({
      transport, command, args, cwd, env: Object.keys(e.env).sort(), url, headers: Object.keys(e.headers).sort(), oauth, fromEnvironment,
      // Only when there are any: an entry without templates keeps the digest it always had.
      ...(Object.keys(envTemplates).length > 0 ? { envTemplates } : {}),
      ...(Object.keys(headerTemplates).length > 0 ? { headerTemplates } : {}),
    }),
  ).slice(0, 32);
}

/**
 * Env and header values: written with a ${VAR}, a template (kept as written, filled in at
 * launch, like args); written without, a secret value for the secret store.
 */
function splitTemplates(map: Readonly<Record<string, string>>): [Record<string, string>, Record<string, string>] {
  return [Object.fromEntries(Object.entries(map).filter(([, v]) => !hasTemplate(v))), Object.fromEntries(Object.entries(map).filter(([, v]) => hasTemplate(v)))];
}

function asList(map: Readonly<Record<string, string>>): { name: string; template: string }[] {
  return Object.entries(map).map(([name, template]) => ({ name, template }));
}

/** Who wrote the file: the user (settings.json, an import), a project (with what the user named for it), a plugin. */
function trustOf(file: SourceFile): SourceTrust {
  if (file.kind === 'project') return { kind: 'project', directory: file.directory ?? file.file, allowed: file.allowEnv ?? [] };
  if (file.kind === 'plugin') return { kind: 'plugin', plugin: file.plugin ?? '' };
  return { kind: 'own' };
}

/** Content as a human would compare it: everything, secret values included (kept in memory only). */
function sameContent(a: Omit<SourceEntry, 'overrides'>, b: Omit<SourceEntry, 'overrides'>): boolean {
  const content = (e: Omit<SourceEntry, 'overrides'>): string =>
    canonicalJson({ transport: e.transport, command: e.command, args: e.args, env: e.env, envTemplates: e.envTemplates, url: e.url, headers: e.headers, headerTemplates: e.headerTemplates, oauth: e.oauth });
  return content(a) === content(b);
}

/**
 * Merges the files, in the order given (global, then plugins, then projects). A later
 * manual entry (global or project) with the same name replaces an earlier one whole; a
 * plugin entry is namespaced `<plugin>.<key>`, and dropped when its content equals a
 * manual entry's.
 */
export function mergeSources(files: readonly SourceFile[], env: Readonly<Record<string, string | undefined>>): MergeResult {
  const byName = new Map<string, SourceEntry>();
  const skipped: SkippedEntry[] = [];
  const problems: SourceProblem[] = [];
  const plugins: Omit<SourceEntry, 'overrides'>[] = [];
  for (const file of files) {
    const problem = fileProblem(file);
    if (problem !== null || !('json' in file.content)) {
      if (problem !== null) problems.push(problem);
      continue;
    }
    const servers = serversOf(file.content.json, file.kind) as Record<string, unknown>;
    for (const [key, raw] of Object.entries(servers)) {
      const origin: EntryOrigin = { source: file.kind, file: file.file, plugin: file.plugin ?? null };
      const entry = readEntry(key, raw, file, env);
      if (typeof entry === 'string') {
        skipped.push({ name: key, origin, reason: `invalid: ${entry}` });
        continue;
      }
      if (entry instanceof WispError) {
        skipped.push({ name: key, origin, reason: `${entry.code}: ${entry.message}`, code: entry.code });
        continue;
      }
      if (file.kind === 'plugin') {
        plugins.push(entry);
        continue;
      }
      // Names are one regardless of case: "Docs" in a project replaces "docs" from the global file.
      const previous = byName.get(nameKey(entry.name));
      if (previous !== undefined) skipped.push({ name: previous.name, origin: previous.origin, reason: `replaced whole by the entry of the same name in ${entry.origin.file}` });
      byName.set(nameKey(entry.name), { ...entry, overrides: previous?.origin ?? null });
    }
  }
  const manual = [...byName.values()];
  for (const entry of plugins) {
    const twin = manual.find((m) => sameContent(m, entry));
    if (twin !== undefined) {
      skipped.push({ name: entry.name, origin: entry.origin, reason: `same content as "${twin.name}" from ${twin.origin.file}: deduplicated` });
      continue;
    }
    const holder = byName.get(nameKey(entry.name));
    if (holder !== undefined) {
      skipped.push({ name: entry.name, origin: entry.origin, reason: `the name is taken by "${holder.name}" from ${holder.origin.file}` });
      continue;
    }
    byName.set(nameKey(entry.name), { ...entry, overrides: null });
  }
  // Global first, then plugins, then projects: the order the user reads them in.
  const rank: Record<SourceKind, number> = { global: 0, plugin: 1, project: 2 };
  const entries = [...byName.values()].sort((a, b) => rank[a.origin.source] - rank[b.origin.source]);
  return { entries, skipped, problems };
}
