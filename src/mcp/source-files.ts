import { promises as fs } from 'node:fs';
import path from 'node:path';
import { WispError, checkDirectory, openSafe } from '../control/index.js';
import { writeFileAtomic } from '../util/index.js';
import type { SourceFile } from './config-sources.js';

/** A config file bigger than this is not read. */
const MAX_SOURCE_BYTES = 1024 * 1024;
const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

export const GLOBAL_SETTINGS = 'settings.json';
export const PLUGIN_MANIFEST = 'plugin.json';
export const PROJECT_FILE = '.mcp.json';

async function readJson(file: string): Promise<SourceFile['content'] | undefined> {
  let handle;
  try {
    handle = await openSafe(file, 'read');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
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
      return { json: JSON.parse(text) as unknown };
    } catch (error) {
      return { error: `is not valid JSON: ${(error as Error).message}` };
    }
  } finally {
    await handle.close();
  }
}

/**
 * Reads the sources in merge order: `<config>/settings.json` (global), then the plugins in
 * `<config>/plugins/<folder>/plugin.json` that settings.json lists in `enabledPlugins`
 * (sorted by name), then each project's `.mcp.json` in the order they were added.
 */
export async function readSourceFiles(configDir: string, projects: readonly string[]): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  await checkDirectory(configDir);
  const globalFile = path.join(configDir, GLOBAL_SETTINGS);
  const global = await readJson(globalFile);
  let enabled: string[] = [];
  if (global !== undefined) {
    files.push({ kind: 'global', file: globalFile, content: global });
    if ('json' in global && typeof global.json === 'object' && global.json !== null) {
      const list = (global.json as { enabledPlugins?: unknown }).enabledPlugins;
      if (Array.isArray(list)) enabled = list.filter((n): n is string => typeof n === 'string');
    }
  }
  const pluginsDir = path.join(configDir, 'plugins');
  const folders = (await checkDirectory(pluginsDir)) === 'absent' ? [] : await fs.readdir(pluginsDir).catch(() => [] as string[]);
  const plugins: SourceFile[] = [];
  for (const folder of folders.sort()) {
    const file = path.join(pluginsDir, folder, PLUGIN_MANIFEST);
    const content = await readJson(file);
    if (content === undefined) continue;
    const declared = 'json' in content && typeof content.json === 'object' && content.json !== null ? (content.json as { name?: unknown }).name : undefined;
    const name = typeof declared === 'string' ? declared : folder;
    if (!enabled.includes(name)) continue;
    if (!PLUGIN_NAME.test(name)) {
      plugins.push({ kind: 'plugin', file, plugin: name, content: { error: `the plugin name ${JSON.stringify(name)} is not 1-32 of A-Z a-z 0-9 _ -` } });
      continue;
    }
    plugins.push({ kind: 'plugin', file, plugin: name, directory: path.join(pluginsDir, folder), content });
  }
  files.push(...plugins.sort((a, b) => (a.plugin ?? '').localeCompare(b.plugin ?? '')));
  for (const directory of projects) {
    const file = path.join(directory, PROJECT_FILE);
    files.push({ kind: 'project', file, directory, content: (await readJson(file)) ?? { error: `there is no ${PROJECT_FILE} in ${directory}` } });
  }
  return files;
}

/** `<data>/sources.json`: the project directories the user added. Atomic writes. */
export class ProjectList {
  readonly file: string;
  private projects: string[] = [];

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'sources.json');
  }

  async load(): Promise<string | null> {
    const content = await readJson(this.file);
    if (content === undefined) return null;
    if ('error' in content) return `${this.file} ${content.error}`;
    const list = (content.json as { projects?: unknown } | null)?.projects;
    if (!Array.isArray(list) || !list.every((p): p is string => typeof p === 'string' && path.isAbsolute(p))) return `${this.file} has no valid projects list`;
    this.projects = list;
    return null;
  }

  list(): readonly string[] {
    return this.projects;
  }

  async add(directory: string): Promise<readonly string[]> {
    if (!path.isAbsolute(directory)) throw new WispError('INVALID_PARAMS', `give the project directory as an absolute path, not ${JSON.stringify(directory)}`);
    const stat = await fs.stat(directory).catch(() => undefined);
    if (stat?.isDirectory() !== true) throw new WispError('INVALID_PARAMS', `${directory} is not a directory`);
    if (this.projects.includes(directory)) return this.projects;
    await this.save([...this.projects, path.normalize(directory)]);
    return this.projects;
  }

  async remove(directory: string): Promise<readonly string[]> {
    if (!this.projects.includes(directory)) throw new WispError('INVALID_PARAMS', `${directory} is not a project source`);
    await this.save(this.projects.filter((p) => p !== directory));
    return this.projects;
  }

  private async save(next: string[]): Promise<void> {
    try {
      await writeFileAtomic(this.file, `${JSON.stringify({ schemaVersion: 1, projects: next }, null, 2)}\n`);
    } catch (error) {
      throw new WispError('STORAGE_FAILED', `could not write ${this.file}: ${(error as Error).message}`);
    }
    this.projects = next;
  }
}
