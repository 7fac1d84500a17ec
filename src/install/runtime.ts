import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { semver } from './semver.js';
import { WispError, type InstallPlanView } from '../core/index.js';

/** Where Node and npm are looked for: never the user's shell or PATH. A setting, so tests can add one. */
export const DEFAULT_RUNTIME_DIRS = ['/opt/homebrew/bin', '/usr/local/bin', '/usr/bin', '/bin'] as const;
export const MIN_NPM_MAJOR = 12;

/**
 * What to do about a missing or old runtime. "Update npm" alone misleads: npm 12 refuses
 * to run on the Node most machines have, so the way out is usually a separate directory.
 */
const RUNTIME_ADVICE =
  `npm ${MIN_NPM_MAJOR} needs Node 22.22.2+ (or 24.15+, or 26+): put such a node and npm ${MIN_NPM_MAJOR} in one directory ` +
  'and point installs at it with `wispctl install settings --runtime-dir DIR`, or install the server by hand and register it.';

/** The runtime found: what plans and attempts show (node, nodeVersion, npmVersion), and npm's entry point. */
export interface Runtime extends Readonly<InstallPlanView['runtime']> {
  /** npm's own entry point, run as `node <npmCli>` (no shell, no npm shim). */
  readonly npmCli: string;
}

async function executable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The npm package behind an `npm` shim: its bin/npm-cli.js and version, read from its package.json (nothing is run). */
async function npmBehind(shim: string): Promise<{ cli: string; version: string } | undefined> {
  let dir = path.dirname(await fs.realpath(shim));
  for (let i = 0; i < 4; i++) {
    try {
      const pkg = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      const cli = path.join(dir, 'bin', 'npm-cli.js');
      if (pkg.name === 'npm' && typeof pkg.version === 'string' && (await fs.stat(cli).catch(() => undefined)) !== undefined) return { cli, version: pkg.version };
    } catch {
      // not here: go up
    }
    dir = path.dirname(dir);
  }
  return undefined;
}

function nodeVersion(node: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(node, ['--version'], { env: {}, timeout: 10_000 }, (error, stdout) => {
      if (error === null) resolve(stdout.trim());
      else reject(new Error(`${node} --version failed: ${error.message}`));
    });
  });
}

/**
 * Finds the first directory with both node and npm, and requires npm 12 or newer (npm 12
 * refuses git and remote dependencies and install scripts by default). The daemon never
 * installs a runtime.
 */
export async function findRuntime(dirs: readonly string[] = DEFAULT_RUNTIME_DIRS): Promise<Runtime> {
  const tooOld: string[] = [];
  for (const dir of dirs) {
    const node = path.join(dir, 'node');
    const npm = path.join(dir, 'npm');
    if (!(await executable(node)) || !(await executable(npm))) continue;
    const found = await npmBehind(npm);
    if (found === undefined) continue;
    if ((semver().major(found.version, true) || 0) < MIN_NPM_MAJOR) {
      tooOld.push(`${npm} is npm ${found.version}`);
      continue;
    }
    return { node, nodeVersion: await nodeVersion(node), npmCli: found.cli, npmVersion: found.version };
  }
  if (tooOld.length > 0) {
    throw new WispError('NPM_TOO_OLD', `installs need npm ${MIN_NPM_MAJOR} or newer, and ${tooOld.join('; ')}. ${RUNTIME_ADVICE}`, { found: tooOld });
  }
  throw new WispError(
    'RUNTIME_NOT_FOUND',
    `no Node.js with npm in ${dirs.join(', ')}. ${RUNTIME_ADVICE}`,
    { searched: [...dirs] },
  );
}
