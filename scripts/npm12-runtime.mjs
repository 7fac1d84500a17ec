// Installs Node 22 and npm 12 from the npm registry into .cache/npm12 (once), for the
// install tests and the install benchmark: the pipeline needs npm 12, and this machine's
// own npm may be older. Prints or returns the bin directory that holds `node` and `npm`,
// laid out the way the daemon's runtime discovery expects.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = '22.23.5';
export const NPM_VERSION = '12.2.2';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache', `npm12-${NODE_VERSION}-${NPM_VERSION}`);

function run(file, args, options) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * The bin directory with node (22) and npm (12), installed on first use. It is built in a
 * directory of its own and renamed into place when complete, so test files that ask for it
 * at the same time (vitest runs them in parallel) never see a half-built one; the links are
 * relative, so they survive the rename.
 */
export async function npm12Bin() {
  const bin = path.join(root, 'bin');
  if (existsSync(path.join(bin, 'ready'))) return bin;
  const building = `${root}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  mkdirSync(building, { recursive: true });
  try {
    const platformPackage = `node-${process.platform}-${process.arch}`;
    // The machine's own npm fetches both (its config carries any proxy CA); nothing is run.
    await run('npm', ['install', '--prefix', building, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error',
      `${platformPackage}@${NODE_VERSION}`, `npm@${NPM_VERSION}`], { cwd: building });
    mkdirSync(path.join(building, 'bin'));
    symlinkSync(path.join('..', 'node_modules', platformPackage, 'bin', 'node'), path.join(building, 'bin', 'node'));
    symlinkSync(path.join('..', 'node_modules', 'npm', 'bin', 'npm-cli.js'), path.join(building, 'bin', 'npm'));
    await run(path.join(building, 'bin', 'node'), [path.join(building, 'bin', 'npm'), '--version'], { env: {} });
    writeFileSync(path.join(building, 'bin', 'ready'), '');
    if (!existsSync(path.join(bin, 'ready'))) {
      // A leftover of an interrupted build by an older version of this script.
      rmSync(root, { recursive: true, force: true });
      try {
        renameSync(building, root);
      } catch (error) {
        // Another process finished first: use its copy.
        if (!existsSync(path.join(bin, 'ready'))) throw error;
      }
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === undefined) console.log(await npm12Bin());

/**
 * Installs `specs` (exact versions) from the npm registry into .cache/NAME once, with the
 * machine's own npm (its config carries any proxy CA) and --ignore-scripts: nothing of them
 * runs at install. Built in a directory of its own and renamed into place when complete, as
 * npm12Bin() is, so test files that ask at the same time never see a half-built one.
 * `finish(dir)` runs on the new copy before it is marked ready. Returns the directory (its
 * node_modules/ holds the packages).
 */
export async function cachedInstall(name, specs, finish = async () => undefined) {
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache', name);
  if (existsSync(path.join(dir, 'ready'))) return dir;
  const building = `${dir}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  mkdirSync(building, { recursive: true });
  try {
    await run('npm', ['install', '--prefix', building, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd: building });
    await finish(building);
    writeFileSync(path.join(building, 'ready'), '');
    if (!existsSync(path.join(dir, 'ready'))) {
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(building, dir);
      } catch (error) {
        // Another process finished first: use its copy.
        if (!existsSync(path.join(dir, 'ready'))) throw error;
      }
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

export const CONFORMANCE_VERSION = '0.1.16';

/** The MCP conformance suite's CLI (it needs Node 22: run it with the node from npm12Bin()), installed on first use. */
export async function conformanceCli() {
  const dir = await cachedInstall(`conformance-${CONFORMANCE_VERSION}`, [`@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`]);
  return path.join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
}

export const INSPECTOR_VERSION = '2.12.0';

/**
 * The MCP Inspector (`@modelcontextprotocol/inspector`): the path of its launcher, which
 * takes `--cli` for its scriptable mode. It needs Node 22.19 or later (run it with the node
 * from npm12Bin()). Installed on first use, not a dependency: about 110 MB that only the
 * gateway's test uses.
 */
export async function inspectorLauncher() {
  const dir = await cachedInstall(`inspector-${INSPECTOR_VERSION}`, [`@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`]);
  return path.join(dir, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
}

/** The reference servers the sandbox is tested with (issue 34), at one exact version. */
export const REAL_SERVERS_VERSION = '2026.8.31';
const REAL_SERVERS = ['filesystem', 'memory', 'everything'];

/**
 * server-filesystem, server-memory and server-everything from the npm registry, installed
 * together (their dependencies hoisted into one node_modules, as `npm install` lays them
 * out for a user) on first use: the path of each one's entry script, by short name, and
 * `bin`, the node_modules/.bin directory with their `mcp-server-NAME` links.
 */
export async function realServers() {
  const dir = await cachedInstall(`real-servers-${REAL_SERVERS_VERSION}`, REAL_SERVERS.map((name) => `@modelcontextprotocol/server-${name}@${REAL_SERVERS_VERSION}`));
  const scripts = Object.fromEntries(REAL_SERVERS.map((name) => [name, path.join(dir, 'node_modules', '@modelcontextprotocol', `server-${name}`, 'dist', 'index.js')]));
  return { ...scripts, bin: path.join(dir, 'node_modules', '.bin') };
}

/** The Node.js releases besides the machine's own that CI runs the unit and gateway tests on (the LTS lines after 20). */
export const OTHER_NODE_VERSIONS = ['22.23.5', '24.22.3'];

/** A bin directory holding `node` of that version (from the registry's node-<platform>-<arch> package), installed on first use. */
export async function nodeBin(version) {
  const platformPackage = `node-${process.platform}-${process.arch}`;
  const dir = await cachedInstall(`node-${version}`, [`${platformPackage}@${version}`], async (building) => {
    mkdirSync(path.join(building, 'bin'));
    symlinkSync(path.join('..', 'node_modules', platformPackage, 'bin', 'node'), path.join(building, 'bin', 'node'));
    await run(path.join(building, 'bin', 'node'), ['--version'], { env: {} });
  });
  return path.join(dir, 'bin');
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--node') {
  for (const version of OTHER_NODE_VERSIONS) console.log(`${version} ${await nodeBin(version)}`);
}
