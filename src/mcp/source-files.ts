import { promises as fs } from 'node:fs';
import path from 'node:path';
import { WispError } from '../core/index.js';
import { checkDirectory, openSafe, parseJsonc } from '../util/index.js';
import { moveAside, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { fileProblem, type SourceContent, type SourceFile } from './config-sources.js';
import { isDaemonOwn } from './env-rules.js';

/** A config file bigger than this is not read. */
const MAX_SOURCE_BYTES = 1024 * 1024;
const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** At most this many variables named for one project. */
const MAX_ALLOWED_ENV = 64;

/** A project directory and the variables of the daemon's environment the user named for it. */
export interface ProjectSource {
  readonly directory: string;
  readonly allowEnv: readonly string[];
}

export const GLOBAL_SETTINGS = 'settings.json';
export const PLUGIN_MANIFEST = 'plugin.json';
export const PROJECT_FILE = '.mcp.json';

type Parsed = { readonly json: unknown } | { readonly error: string };

/** A JSON file of ours: undefined when it is not there; UNSAFE_FILE (thrown) when it is not the user's own. */
async function readJson(file: string): Promise<Parsed | undefined> {
  let handle;
  try {
    handle = await openSafe(file, 'read');
  } catch (error) {
    // ENOTDIR: a plain file where a plugin folder or a project directory would be.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    // Not the user's own file (planted, shared, a symlink): refused, never read.
    if (error instanceof WispError) throw error;
    return { error: `cannot be read: ${(error as Error).message}` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { error: 'is not a regular file' };
    if (stat.size > MAX_SOURCE_BYTES) return { error: `is larger than ${MAX_SOURCE_BYTES} bytes` };
    const text = await handle.readFile('utf8');
    try {
      // Comments allowed, as in the clients' own files (JSONC).
      return { json: parseJsonc(text) };
    } catch (error) {
      return { error: `is not valid JSON: ${(error as Error).message}` };
    }
  } finally {
    await handle.close();
  }
}

/**
 * A config source: never fatal. A file that is not the user's own is UNSAFE_FILE (nothing
 * read from it); one that cannot be read or parsed INVALID_CONFIG; either way the rest of the
 * sources are still used, and the daemon still starts.
 */
async function readSource(file: string): Promise<SourceContent | undefined> {
  try {
    const content = await readJson(file);
    if (content === undefined || 'json' in content) return content;
    return { error: content.error, unusable: 'INVALID_CONFIG' };
  } catch (error) {
    return unusable(error);
  }
}

/** What went wrong with a source (a refusal of safe-file: UNSAFE_FILE; anything else: INVALID_CONFIG). */
function unusable(error: unknown): SourceContent {
  if (error instanceof WispError && error.code === 'UNSAFE_FILE') return { error: error.message, unusable: 'UNSAFE_FILE' };
  return { error: `cannot be read: ${error instanceof Error ? error.message : String(error)}`, unusable: 'INVALID_CONFIG' };
}

/** Checks a directory of the sources: null when it is usable (or absent), else why not (nothing in it is read). */
async function directoryContent(dir: string): Promise<SourceContent | 'absent' | null> {
  try {
    return (await checkDirectory(dir)) === 'absent' ? 'absent' : null;
  } catch (error) {
    return unusable(error);
  }
}

/**
 * Reads the sources in merge order: `<config>/settings.json` (global), then the plugins in
 * `<config>/plugins/<folder>/plugin.json` that settings.json lists in `enabledPlugins`
 * (sorted by name), then each project's `.mcp.json` in the order they were added.
 */
export async function readSourceFiles(configDir: string, projects: readonly ProjectSource[], gave: (file: string) => boolean = () => false): Promise<SourceFile[]> {
  const configProblem = await directoryContent(configDir);
  // A config dir that is not the user's own: nothing in it is read (its problem names the
  // directory, so the services of settings.json and of every plugin are kept as they were).
  const files: SourceFile[] = configProblem !== null && configProblem !== 'absent' ? [{ kind: 'global', file: configDir, content: configProblem }] : await readConfigDir(configDir, gave);
  for (const { directory, allowEnv } of projects) files.push(await readProject(directory, allowEnv));
  return files;
}

/** A project's .mcp.json, as a source. */
export async function readProject(directory: string, allowEnv: readonly string[] = []): Promise<SourceFile> {
  const file = path.join(directory, PROJECT_FILE);
  const content = (await readSource(file)) ?? { error: `there is no ${PROJECT_FILE} in ${directory}`, absent: true as const };
  return { kind: 'project', file, directory, allowEnv, content };
}

/** settings.json, then the enabled plugins (by name). `gave`: whether a service came from that file. */
async function readConfigDir(configDir: string, gave: (file: string) => boolean): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  const globalFile = path.join(configDir, GLOBAL_SETTINGS);
  const global = await readSource(globalFile);
  let enabled: string[] = [];
  if (global !== undefined) {
    files.push({ kind: 'global', file: globalFile, content: global });
    if ('json' in global && typeof global.json === 'object' && global.json !== null) {
      const list = (global.json as { enabledPlugins?: unknown }).enabledPlugins;
      if (Array.isArray(list)) enabled = list.filter((n): n is string => typeof n === 'string');
    }
  }
  const pluginsDir = path.join(configDir, 'plugins');
  if (global !== undefined && !('json' in global)) {
    // Which plugins are enabled is unknown: none is read, and the services they gave are kept.
    if ((await directoryContent(pluginsDir)) === 'absent') return files;
    return [...files, { kind: 'plugin', file: pluginsDir, content: { error: `not read: ${GLOBAL_SETTINGS}, which says which plugins are enabled, could not be used`, unusable: 'unusable' in global ? global.unusable : 'INVALID_CONFIG' } }];
  }
  return [...files, ...(await readPlugins(pluginsDir, enabled, gave))];
}

/**
 * The enabled plugins, sorted by name. A manifest that cannot be used holds the plugin's
 * name, so whether it is enabled is unknown: it is reported when its folder's name is
 * enabled or a service came from it (those services are kept), and left alone otherwise.
 */
async function readPlugins(pluginsDir: string, enabled: readonly string[], gave: (file: string) => boolean): Promise<SourceFile[]> {
  const dirProblem = await directoryContent(pluginsDir);
  if (dirProblem === 'absent') return [];
  if (dirProblem !== null) return [{ kind: 'plugin', file: pluginsDir, content: dirProblem }];
  let folders: string[];
  try {
    folders = await fs.readdir(pluginsDir);
  } catch (error) {
    return [{ kind: 'plugin', file: pluginsDir, content: unusable(error) }];
  }
  const plugins: SourceFile[] = [];
  for (const folder of folders.sort()) {
    const file = path.join(pluginsDir, folder, PLUGIN_MANIFEST);
    const content = await readSource(file);
    if (content === undefined) continue;
    if (!('json' in content)) {
      if (enabled.includes(folder) || gave(file)) plugins.push({ kind: 'plugin', file, plugin: folder, content });
      continue;
    }
    const declared = typeof content.json === 'object' && content.json !== null ? (content.json as { name?: unknown }).name : undefined;
    const name = typeof declared === 'string' ? declared : folder;
    if (!enabled.includes(name)) continue;
    if (!PLUGIN_NAME.test(name)) {
      plugins.push({ kind: 'plugin', file, plugin: name, content: { error: `the plugin name ${JSON.stringify(name)} is not 1-32 of A-Z a-z 0-9 _ -`, unusable: 'INVALID_CONFIG' } });
      continue;
    }
    plugins.push({ kind: 'plugin', file, plugin: name, directory: path.join(pluginsDir, folder), content });
  }
  return plugins.sort((a, b) => (a.plugin ?? '').localeCompare(b.plugin ?? ''));
}

/**
 * `<data>/sources.json`: the project directories the user added, and for each the variables
 * of the daemon's environment the user named for it (`allowEnv`). Atomic writes.
 */
export class ProjectList {
  readonly file: string;
  private projects: string[] = [];
  private allowed = new Map<string, readonly string[]>();

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'sources.json');
  }

  /**
   * Reads the list. A file that is not a JSON `{projects: [absolute paths]}` is moved aside
   * intact (`sources.json.bad-<time>`); when only some entries are bad, the good ones are
   * kept and written back, the original moved aside. Problems are returned, never thrown.
   */
  async load(now: Date = new Date()): Promise<StorageProblem | null> {
    const content = await readJson(this.file);
    if (content === undefined) return null;
    if ('error' in content) return this.setAside(content.error.replace(/^is not valid JSON.*$/s, 'is not valid JSON'), [], now);
    const doc = content.json;
    const list = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as { projects?: unknown }).projects : undefined;
    if (!Array.isArray(list)) return this.setAside('has no projects list', [], now);
    const good = list.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p) && !p.includes('\0'));
    const unique = [...new Set(good)];
    // What the user named for a project; anything not exactly a list of names names nothing (closed).
    const named: unknown = (doc as { allowEnv?: unknown }).allowEnv;
    this.allowed = new Map();
    if (typeof named === 'object' && named !== null && !Array.isArray(named)) {
      for (const [directory, names] of Object.entries(named as Record<string, unknown>)) {
        if (!unique.includes(directory) || !Array.isArray(names) || names.length > MAX_ALLOWED_ENV) continue;
        if (names.every((n) => typeof n === 'string' && ENV_NAME.test(n))) this.allowed.set(directory, [...new Set(names as string[])]);
      }
    }
    if (unique.length === list.length) {
      this.projects = unique;
      return null;
    }
    return this.setAside(`has ${list.length - good.length} project entries that are not absolute paths${good.length !== unique.length ? ' (or repeats)' : ''}`, unique, now);
  }

  private async setAside(problem: string, keep: string[], now: Date): Promise<StorageProblem> {
    let movedTo: string;
    try {
      movedTo = await moveAside(this.file, now);
    } catch (error) {
      return { file: this.file, problem: `${problem}: not used (it could not be moved aside: ${(error as NodeJS.ErrnoException).code ?? String(error)})`, movedTo: null };
    }
    if (keep.length > 0) {
      try {
        await this.save(keep);
      } catch {
        // The good entries stay in memory for this run; the moved file still has them.
      }
      this.projects = keep;
      return { file: this.file, problem: `${problem}: moved aside, the ${keep.length} good entries kept`, movedTo };
    }
    return { file: this.file, problem: `${problem}: moved aside`, movedTo };
  }

  list(): readonly string[] {
    return this.projects;
  }

  /** The projects in order, each with the variables named for it. */
  sources(): ProjectSource[] {
    return this.projects.map((directory) => ({ directory, allowEnv: this.allowed.get(directory) ?? [] }));
  }

  /**
   * Adds a project (or, already added, leaves it where it is). `allowEnv`, when given,
   * replaces the variables named for it (an empty list names none); absent, they stay.
   */
  async add(directory: string, allowEnv?: readonly string[]): Promise<readonly string[]> {
    if (!path.isAbsolute(directory)) throw new WispError('INVALID_PARAMS', `give the project directory as an absolute path, not ${JSON.stringify(directory)}`);
    const stat = await fs.stat(directory).catch(() => undefined);
    if (stat?.isDirectory() !== true) throw new WispError('INVALID_PARAMS', `${directory} is not a directory`);
    const bad = (allowEnv ?? []).find((n) => !ENV_NAME.test(n));
    if (bad !== undefined) throw new WispError('INVALID_PARAMS', `${JSON.stringify(bad)} is not a variable name`);
    const own = (allowEnv ?? []).filter(isDaemonOwn);
    if (own.length > 0) {
      throw new WispError('ENV_NOT_ALLOWED', `${own.join(', ')} ${own.length === 1 ? 'is' : 'are'} the daemon's own (DEEPSEEK_API_KEY, DEEPSEEK_*, WISP_*): never given to a server, whatever is named`, { variables: own });
    }
    const normalized = this.projects.includes(directory) ? directory : path.normalize(directory);
    // Refused before it is recorded: a project whose file cannot be used would only be skipped
    // at every start. (One with no .mcp.json yet is added: the file may come later.)
    const problem = fileProblem(await readProject(normalized));
    if (problem?.code !== undefined) {
      const why = problem.code === 'UNSAFE_FILE' ? problem.message : `${problem.file} ${problem.message.startsWith('is ') || problem.message.startsWith('cannot') ? '' : 'is unusable: '}${problem.message}`;
      throw new WispError(problem.code, `${normalized} was not added: ${why}`, { path: problem.file });
    }
    const allowed = new Map(this.allowed);
    if (allowEnv !== undefined) {
      if (allowEnv.length === 0) allowed.delete(normalized);
      else allowed.set(normalized, [...new Set(allowEnv)].sort());
    }
    const next = this.projects.includes(normalized) ? this.projects : [...this.projects, normalized];
    if (next === this.projects && allowEnv === undefined) return this.projects;
    await this.save(next, allowed);
    return this.projects;
  }

  /** What the list holds now: to put back with `restore` when what followed a change failed. */
  snapshot(): { readonly projects: readonly string[]; readonly allowed: ReadonlyMap<string, readonly string[]> } {
    return { projects: [...this.projects], allowed: new Map(this.allowed) };
  }

  async restore(snapshot: ReturnType<ProjectList['snapshot']>): Promise<void> {
    await this.save([...snapshot.projects], snapshot.allowed);
  }

  async remove(directory: string): Promise<readonly string[]> {
    if (!this.projects.includes(directory)) throw new WispError('INVALID_PARAMS', `${directory} is not a project source`);
    const allowed = new Map(this.allowed);
    allowed.delete(directory);
    await this.save(this.projects.filter((p) => p !== directory), allowed);
    return this.projects;
  }

  private async save(next: string[], allowed: ReadonlyMap<string, readonly string[]> = this.allowed): Promise<void> {
    const kept = new Map([...allowed].filter(([directory]) => next.includes(directory)));
    const doc = { schemaVersion: 1, projects: next, ...(kept.size > 0 ? { allowEnv: Object.fromEntries(kept) } : {}) };
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(doc, null, 2)}\n`);
    } catch (error) {
      throw new WispError('STORAGE_FAILED', `could not write ${this.file}: ${(error as Error).message}`);
    }
    this.projects = next;
    this.allowed = kept;
  }
}
