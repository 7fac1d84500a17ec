import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SYSTEM_DIRS, within, type Need, type SystemEntry } from './profile.js';

/**
 * What a command needs to run, read-only, found from the command, its args and cwd: the
 * program (and its install prefix for an interpreter, so Node finds its lib/ and Python its
 * standard library), the interpreter of a `#!` script, a Python virtualenv, and the script
 * or package the command or the interpreter's first argument names (the package root: the
 * nearest package.json, pyproject.toml..., or for an npm install the node_modules it sits
 * in). Never the home directory or an ancestor of it: a script lying loose in ~ is granted
 * alone. Other paths in the args are not needed to run: they are offered (profile.ts).
 */

/** Interpreters whose first positional argument is the script they run. */
const INTERPRETER = /^(node|nodejs|python[0-9.]*|pypy[0-9.]*|deno|bun|ruby|perl|php|tsx|ts-node)$/;
/** Options after which an interpreter runs no script file (-e code, -m module, -c code). */
const NO_SCRIPT_OPTIONS = new Set(['-e', '--eval', '-p', '--print', '-m', '-c', '--check', '-v', '--version', '-h', '--help', 'run', 'eval', 'repl']);
/** Interpreter options that take the next argument as their value. */
const VALUED_OPTIONS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-X', '-W', '--conditions', '-C', '--env-file', '--input-type']);
const PACKAGE_MARKERS = ['package.json', 'pyproject.toml', 'setup.py', 'setup.cfg', 'deno.json', 'deno.jsonc', 'Gemfile', 'composer.json'];

/** Programs that fetch what they run at launch: sandboxed, with no network or cache, they cannot. */
const FETCHERS = /^(npx|npx-cli\.js|uvx|pnpx|bunx|pipx)$/;

export interface NeedsInput {
  /** The command, resolved to an absolute path (launch.ts: resolveCommand). */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string | null;
  /** The HOME the server sees: never granted, nor any ancestor of it. */
  readonly home: string;
  /** Finds a bare name the way the server's `/usr/bin/env NAME` will (the daemon's PATH). */
  readonly which: (name: string) => Promise<string | undefined>;
}

export interface RuntimeNeeds {
  readonly needs: Need[];
  /** What the sandbox will likely stop from working (npx fetching at run time). */
  readonly warnings: string[];
}

export async function runtimeNeeds(input: NeedsInput): Promise<RuntimeNeeds> {
  const needs: Need[] = [];
  const warnings: string[] = [];
  const add = (need: Need): void => {
    if (!needs.some((n) => within(need.path, n.path))) needs.push(need);
  };
  const program = await programNeeds(input.command, input, add, 0);
  if (FETCHERS.test(path.basename(input.command)) || FETCHERS.test(path.basename(program))) {
    warnings.push(`${path.basename(input.command)} downloads what it runs at launch: sandboxed, it has no network and no cache. Install the package (wispctl install) and register it, or grant the network (--net all).`);
  }
  if (INTERPRETER.test(path.basename(program)) || INTERPRETER.test(path.basename(input.command))) {
    const script = firstScript(input.args);
    if (script !== undefined) {
      const file = path.isAbsolute(script) ? script : input.cwd !== null ? path.join(input.cwd, script) : undefined;
      if (file !== undefined && (await isFile(file))) await scriptNeeds(file, input.home, add);
    }
  }
  return { needs, warnings };
}

/** The program and what it needs; returns its real path. */
async function programNeeds(command: string, input: NeedsInput, add: (need: Need) => void, level: number): Promise<string> {
  const real = await fs.realpath(command).catch(() => command);
  const interpreter = INTERPRETER.test(path.basename(real)) || INTERPRETER.test(path.basename(command));
  // A virtualenv's python is a symlink to the system's: it finds its packages by the path it was run as.
  const venv = path.dirname(path.dirname(command));
  if (!tooBroad(venv, input.home) && (await isFile(path.join(venv, 'pyvenv.cfg')))) add({ path: venv, why: 'venv' });
  for (const p of new Set([command, real])) {
    if (isSystem(p)) continue;
    add({ path: programHome(p, interpreter, input.home), why: level === 0 ? 'runtime' : 'interpreter' });
  }
  if (level < 3) {
    const shebang = await readShebang(real);
    if (shebang !== undefined) {
      const interpreterPath = await shebangProgram(shebang, input.which);
      if (interpreterPath !== undefined) await programNeeds(interpreterPath, input, add, level + 1);
      if (!isSystem(real)) await scriptNeeds(real, input.home, add);
    }
  }
  return real;
}

/** Where a program's own files are: an interpreter's install prefix (`<prefix>/bin/node`), else its directory. */
function programHome(file: string, interpreter: boolean, home: string): string {
  const dir = path.dirname(file);
  const prefix = path.dirname(dir);
  if (interpreter && path.basename(dir) === 'bin' && !tooBroad(prefix, home)) return prefix;
  return tooBroad(dir, home) ? file : dir;
}

/** A script and its package: the node_modules it is installed in, or its nearest package root. */
async function scriptNeeds(script: string, home: string, add: (need: Need) => void): Promise<void> {
  const real = await fs.realpath(script).catch(() => script);
  for (const file of new Set([script, real])) {
    if (isSystem(file)) continue;
    add({ path: await packageRoot(file, home), why: 'script' });
  }
}

async function packageRoot(file: string, home: string): Promise<string> {
  const installed = file.indexOf('/node_modules/');
  if (installed > 0) {
    const modules = file.slice(0, installed + '/node_modules'.length);
    if (!tooBroad(path.dirname(modules), home)) return modules;
  }
  for (let dir = path.dirname(file); !tooBroad(dir, home); dir = path.dirname(dir)) {
    for (const marker of PACKAGE_MARKERS) if (await isFile(path.join(dir, marker))) return dir;
  }
  const dir = path.dirname(file);
  return tooBroad(dir, home) ? file : dir;
}

/**
 * A directory that is never granted as a whole for a program: the root, /tmp, the home
 * directory or any of its ancestors (/home), and the top of a tree (/opt, /srv, /mnt).
 */
export function tooBroad(dir: string, home: string): boolean {
  return dir === '/' || path.dirname(dir) === '/' || within(home, dir);
}

function isSystem(p: string): boolean {
  return SYSTEM_DIRS.some((dir) => within(p, dir));
}

/** The first argument an interpreter takes as its script, if it takes one. */
function firstScript(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (NO_SCRIPT_OPTIONS.has(arg)) return undefined;
    if (arg === '--') return args[i + 1];
    if (VALUED_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

async function readShebang(file: string): Promise<string | undefined> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(file, 'r');
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, 256, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    if (!text.startsWith('#!')) return undefined;
    return text.slice(2).split('\n')[0]?.trim();
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** The program a `#!` line runs: its path, or for `/usr/bin/env [-S] NAME` NAME found as env will find it. */
async function shebangProgram(line: string, which: NeedsInput['which']): Promise<string | undefined> {
  const [first, ...rest] = line.split(/\s+/).filter((word) => word !== '');
  if (first === undefined || !path.isAbsolute(first)) return undefined;
  if (path.basename(first) !== 'env') return first;
  const name = rest.find((word) => !word.startsWith('-'));
  if (name === undefined) return undefined;
  return path.isAbsolute(name) ? name : which(name);
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The system directories as they are here (lstat): a directory is bound, a symlink (merged /usr) recreated. */
export async function systemLayout(): Promise<SystemEntry[]> {
  const entries: SystemEntry[] = [];
  for (const dir of SYSTEM_DIRS) {
    const stat = await fs.lstat(dir).catch(() => undefined);
    if (stat === undefined) continue;
    if (stat.isSymbolicLink()) entries.push({ path: dir, kind: 'symlink', target: await fs.readlink(dir) });
    else if (stat.isDirectory()) entries.push({ path: dir, kind: 'dir' });
  }
  return entries;
}
