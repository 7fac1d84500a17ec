import { WispError } from '../core/index.js';

/**
 * Which `${VAR}`s of the daemon's environment a config entry may read, and which of the
 * values read are secrets. Pure; one rule for config sources, imports and every launch.
 *
 * - The daemon's own variables (DEEPSEEK_API_KEY, any DEEPSEEK_* or WISP_*) are never read
 *   for a server, from any file, in any field: the entry is refused (ENV_NOT_ALLOWED).
 * - The public variables below (the SDK's minimal inherited set, which every server gets
 *   anyway, and the user's own directories and locale) may be read by every source. Their
 *   values are not secrets: shown as they are, never redacted.
 * - Any other variable is a secret (redacted wherever it appears). The user's own
 *   settings.json and a file the user imports may read it; a project's .mcp.json only when
 *   the user named it for that project (`sources add-project DIR --allow-env NAME`); a
 *   plugin's file never.
 */
export const PUBLIC_ENV: ReadonlySet<string> = new Set([
  // The SDK's default inherited environment (POSIX, then Windows).
  'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER',
  'APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PROCESSOR_ARCHITECTURE', 'PROGRAMFILES', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE',
  // The user's own directories and locale.
  'TMPDIR', 'TMP', 'LANG', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME',
]);

/** The daemon's own variables: the model API key and its own settings. Never given to a server. */
export function isDaemonOwn(name: string): boolean {
  return name === 'DEEPSEEK_API_KEY' || name.startsWith('DEEPSEEK_') || name.startsWith('WISP_');
}

/** Whether the value of this variable is a secret (held by the redactor) once read. */
export function isSecretVariable(name: string): boolean {
  return !PUBLIC_ENV.has(name);
}

/** A word in a variable's name that says its value is a secret (API_KEY, GITHUB_TOKEN, DB_PASSWORD, AUTH_HEADER, ...). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASS|PWD|AUTH|CRED|COOKIE|SESSION|PRIVATE|CERT|SIGN|BEARER|DSN|CONN|ACCESS|SALT|PIN/i;
/** A path (absolute, home-relative or relative), without a scheme or credentials. */
const PATH_VALUE = /^(?:\/|~\/|\.\.?\/)[^\s:@]*$/;
/** A number, or one word of a setting: `production`, `debug`, `true`, `en-US`, `Info` (mixed case inside a part, `abcDEFghi`, is a token's). */
const SETTING_VALUE = /^(?:-?\d+(?:\.\d+)?|(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)(?:[-_.](?:[a-z]+|[A-Z]+|[A-Z][a-z]+))*)$/;

/**
 * Whether a value written in a config entry's `env` is plain, not a secret: its name names
 * no secret and the value is a path, a number or one word of a setting. A plain value is
 * kept in the secret store like the others, but never redacted: `ROOT_DIR=/home/me/notes`
 * redacted made an approval of `/home/me/notes/todo.txt` read `[REDACTED:ROOT_DIR]/todo.txt`,
 * text other than what was sent. Anything else is a secret; a plain one is made a secret by
 * setting it again (`wispctl mcp env set NAME VAR`, a secret unless --plain).
 */
export function isPlainValue(name: string, value: string): boolean {
  if (SECRET_NAME.test(name)) return false;
  return value.length <= 4096 && (PATH_VALUE.test(value) || (value.length <= 64 && SETTING_VALUE.test(value)));
}

/** One `${VAR}` a launch reads: where it is written (`command`, `args[1]`, `url`, `env.NAME`, `headers.NAME`). */
export interface EnvironmentRead {
  readonly field: string;
  readonly variable: string;
  readonly secret: boolean;
}

const VAR_NAMES = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;

function namesIn(text: string): string[] {
  return [...new Set([...text.matchAll(VAR_NAMES)].map((m) => m[1] ?? '').filter((n) => n !== ''))];
}

export interface TemplatedLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly url?: string | null | undefined;
  /** The names command, args and url take from the daemon's environment (others stay as written). */
  readonly fromEnvironment?: readonly string[] | undefined;
  readonly envTemplates?: readonly { readonly name: string; readonly template: string }[] | undefined;
  readonly headerTemplates?: readonly { readonly name: string; readonly template: string }[] | undefined;
}

/** Every `${VAR}` a launch of this configuration reads, field by field, in the order they are written. */
export function environmentReads(config: TemplatedLaunch): EnvironmentRead[] {
  const filled = new Set(config.fromEnvironment ?? []);
  const reads: EnvironmentRead[] = [];
  const add = (field: string, text: string, only?: ReadonlySet<string>): void => {
    for (const variable of namesIn(text)) if (only === undefined || only.has(variable)) reads.push({ field, variable, secret: isSecretVariable(variable) });
  };
  if (filled.size > 0) {
    add('command', config.command, filled);
    config.args.forEach((arg, i) => add(`args[${i}]`, arg, filled));
    if (typeof config.url === 'string') add('url', config.url, filled);
  }
  for (const { name, template } of config.envTemplates ?? []) add(`env.${name}`, template);
  for (const { name, template } of config.headerTemplates ?? []) add(`headers.${name}`, template);
  return reads;
}

export type SourceTrust = { readonly kind: 'own' } | { readonly kind: 'project'; readonly directory: string; readonly allowed: readonly string[] } | { readonly kind: 'plugin'; readonly plugin: string };

/**
 * Why these reads are refused, or null when every one is allowed. `own`: the user's
 * settings.json, a file the user imports, or a service already registered.
 */
export function refusedReads(reads: readonly EnvironmentRead[], trust: SourceTrust): WispError | null {
  const own = reads.filter((r) => isDaemonOwn(r.variable));
  if (own.length > 0) {
    const variables = [...new Set(own.map((r) => r.variable))];
    return new WispError(
      'ENV_NOT_ALLOWED',
      `${describe(own)} ${variables.length === 1 ? 'is' : 'are'} the daemon's own (${variables.includes('DEEPSEEK_API_KEY') ? 'the model API key' : 'its settings'}): never given to a server`,
      { variables },
    );
  }
  if (trust.kind === 'own') return null;
  const allowed = new Set(trust.kind === 'project' ? trust.allowed : []);
  const unnamed = reads.filter((r) => r.secret && !allowed.has(r.variable));
  if (unnamed.length === 0) return null;
  const variables = [...new Set(unnamed.map((r) => r.variable))];
  const how =
    trust.kind === 'project'
      ? `a project file may read only ${PUBLIC_HINT} and the variables you name for it: wispctl mcp sources add-project ${trust.directory} --allow-env ${variables.join(',')}`
      : `a plugin's file may read only ${PUBLIC_HINT}: to give its server ${variables.length === 1 ? 'this variable' : 'these variables'}, put the entry in your own settings.json`;
  return new WispError('ENV_NOT_ALLOWED', `${describe(unnamed)}: not read, ${how}`, { variables });
}

const PUBLIC_HINT = 'the public variables (HOME, USER, PATH, TMPDIR, ...)';

function describe(reads: readonly EnvironmentRead[]): string {
  return reads.map((r) => `\${${r.variable}} (in ${r.field})`).join(', ');
}
