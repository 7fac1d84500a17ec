import { execFile } from 'node:child_process';
import { existsSync, promises as fs, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRegistry } from '../../../fixtures/npm/registry.mjs';
import { canonicalTarball, verifyLockfile, type LockProblem } from '../../../src/install/index.js';

// verifyLockfile against REAL lockfiles: the machine's npm resolves each shape against a
// LocalRegistry (npm install --package-lock-only), and the verifier judges what npm wrote.

const run = promisify(execFile);

interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  inBundle?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  dependencies?: Record<string, string>;
}
interface Lock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

/** npm as `node <npm-cli.js>` when /usr/bin/npm is the usual symlink, else the npm on PATH. */
const npmCli = ((): string | undefined => {
  try {
    const cli = realpathSync('/usr/bin/npm');
    return cli.endsWith('.js') ? cli : undefined;
  } catch {
    return undefined;
  }
})();
const CAFILE = '/etc/ssl/certs/ca-certificates.crt';

let registry: LocalRegistry;
let other: LocalRegistry;
let tmp: string;
let userConfig: string;
let globalConfig: string;
let gitRepo: string;
let linkDir: string;
let projects = 0;
/** What afterAll undoes, pushed as beforeAll goes (so a half-done beforeAll is cleaned up too). */
const cleanups: (() => Promise<unknown>)[] = [];

type Result = { lock: Lock; dir: string };
const SHAPES = ['good', 'git', 'url', 'file', 'link', 'bundle', 'other', 'sha1', 'v2'] as const;
/** npm runs, all started in beforeAll (in parallel); each test awaits its own. */
let locks: Record<(typeof SHAPES)[number], Promise<Result>>;

/** A plan directory whose package.json depends on exactly `name@version`; returns npm's lock and the directory. */
async function lockFor(name: string, version: string, extraArgs: string[] = []): Promise<Result> {
  const dir = path.join(tmp, `plan-${projects++}`);
  const home = path.join(dir, '.home');
  await fs.mkdir(home, { recursive: true });
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'wisp-plan', version: '0.0.0', private: true, dependencies: { [name]: version } }));
  const args = [
    'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--logs-max=0', '--fetch-retries=0',
    `--registry=${registry.url}`, `--userconfig=${userConfig}`, `--globalconfig=${globalConfig}`, `--cache=${path.join(dir, '.cache')}`,
    ...(existsSync(CAFILE) ? [`--cafile=${CAFILE}`] : []),
    ...extraArgs,
  ];
  const env = { PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter), HOME: home };
  if (npmCli !== undefined) await run(process.execPath, [npmCli, ...args], { cwd: dir, env });
  else await run('npm', args, { cwd: dir, env });
  return { lock: JSON.parse(await fs.readFile(path.join(dir, 'package-lock.json'), 'utf8')) as Lock, dir };
}

/** Every problem as "path: problem", for readable failures. */
const lines = (problems: LockProblem[]): string[] => problems.map((p) => `${p.path}: ${p.problem}`);
/** The set of entries the verifier flagged. */
const flagged = (problems: LockProblem[]): string[] => [...new Set(problems.map((p) => p.path))].sort();
const at = (p: string): string => `packages[${JSON.stringify(p)}]`;

beforeAll(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'wisp-lock-real-')));
  cleanups.push(() => fs.rm(tmp, { recursive: true, force: true }));
  // Two empty files: npm refuses one file as both user and global config ("double-loading config").
  userConfig = path.join(tmp, 'user-npmrc');
  globalConfig = path.join(tmp, 'global-npmrc');
  await Promise.all([fs.writeFile(userConfig, ''), fs.writeFile(globalConfig, '')]);
  [registry, other] = await Promise.all([LocalRegistry.start(), LocalRegistry.start()]);
  cleanups.push(() => Promise.all([registry.close(), other.close()]));

  // A git dependency: a bare repo with one commit pushed to it.
  gitRepo = path.join(tmp, 'gitdep.git');
  const work = path.join(tmp, 'gitdep-work');
  const gitEnv = { PATH: '/usr/bin:/bin', HOME: tmp, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };
  const git = (...args: string[]) => run('git', args, { env: gitEnv });
  await Promise.all([git('init', '-q', '--bare', '-b', 'main', gitRepo), git('init', '-q', '-b', 'main', work)]);
  await fs.writeFile(path.join(work, 'package.json'), JSON.stringify({ name: 'gitdep', version: '1.0.0' }));
  await git('-C', work, 'add', 'package.json');
  await git('-C', work, 'commit', '-q', '-m', 'gitdep 1.0.0');
  await git('-C', work, 'push', '-q', gitRepo, 'main');

  // A local directory package (file:<dir> makes a link).
  linkDir = path.join(tmp, 'linked-dir');
  await fs.mkdir(linkDir);
  await fs.writeFile(path.join(linkDir, 'package.json'), JSON.stringify({ name: 'linked', version: '1.0.0' }));

  const leaves: Parameters<LocalRegistry['publish']>[0][] = [
    { name: 'leaf', version: '1.0.0' },
    { name: 'leaf', version: '1.1.0' },
    { name: '@scope/util', version: '2.1.0', dependencies: { leaf: '^1.0.0' }, bin: 'cli.js' },
    { name: 'real-pkg', version: '1.4.0' },
    { name: 'plat-darwin', version: '1.0.0', os: ['darwin'], cpu: ['arm64'] },
    { name: 'plat-here', version: '1.0.0', os: [process.platform], cpu: [process.arch] },
    { name: 'plat-ppc', version: '1.0.0', os: ['linux', 'darwin', 'win32'], cpu: ['ppc64'] },
    { name: 'target', version: '1.0.0' },
    { name: 'old-sha1', version: '1.0.0', integrity: 'sha1-only' },
  ];
  await Promise.all(leaves.map((p) => registry.publish(p)));
  await other.publish({ name: '@other/evil', version: '1.0.0' });
  await Promise.all([
    registry.publish({
      name: 'good-server', version: '1.0.0',
      dependencies: { '@scope/util': '^2.0.0', aliased: 'npm:real-pkg@^1.0.0', leaf: '1.0.0' },
      optionalDependencies: { 'plat-darwin': '1.0.0', 'plat-here': '1.0.0', 'plat-ppc': '1.0.0' },
    }),
    registry.publish({ name: 'git-server', version: '1.0.0', dependencies: { gitdep: `git+file://${gitRepo}` } }),
    registry.publish({ name: 'url-server', version: '1.0.0', dependencies: { target: registry.tarballUrl('target', '1.0.0') } }),
    registry.publish({ name: 'file-server', version: '1.0.0', dependencies: { target: `file:${registry.tarballPath('target', '1.0.0')}` } }),
    registry.publish({ name: 'link-server', version: '1.0.0', dependencies: { linked: `file:${linkDir}` } }),
    registry.publish({
      name: 'bundle-server', version: '1.0.0', dependencies: { bundled: '1.0.0' }, bundleDependencies: ['bundled'],
      files: { 'node_modules/bundled/package.json': JSON.stringify({ name: 'bundled', version: '1.0.0' }), 'node_modules/bundled/index.js': 'module.exports = 1;\n' },
    }),
    registry.publish({ name: 'other-server', version: '1.0.0', dependencies: { '@other/evil': '1.0.0' } }),
    registry.publish({ name: 'sha1-server', version: '1.0.0', dependencies: { 'old-sha1': '1.0.0' } }),
  ]);

  locks = {
    good: lockFor('good-server', '1.0.0'),
    git: lockFor('git-server', '1.0.0'),
    url: lockFor('url-server', '1.0.0'),
    file: lockFor('file-server', '1.0.0'),
    link: lockFor('link-server', '1.0.0'),
    bundle: lockFor('bundle-server', '1.0.0'),
    other: lockFor('other-server', '1.0.0', [`--@other:registry=${other.url}`]),
    sha1: lockFor('sha1-server', '1.0.0'),
    v2: lockFor('good-server', '1.0.0', ['--lockfile-version=2']),
  };
  // A failed npm run fails its own test (which awaits it), not the whole file.
  for (const shape of SHAPES) locks[shape].catch(() => undefined);
  cleanups.push(() => Promise.allSettled(Object.values(locks)));
});

afterAll(async () => {
  // Last in, first out: npm runs settle before their registries close and the temp dir goes.
  for (const cleanup of cleanups.reverse()) await cleanup();
});

// Nine real npm runs start together in beforeAll; on a loaded 2-CPU machine the first one
// awaited can take well over the default 30 s, so each test waits for its npm run longer.
describe('verifyLockfile on lockfiles written by the real npm', { timeout: 150_000 }, () => {
  it('accepts a good tree: scoped, npm: alias, nested range, optional platform packages', async () => {
    const { lock } = await locks.good;
    expect(lines(verifyLockfile(lock, { name: 'good-server', version: '1.0.0' }, registry.url))).toEqual([]);

    expect(lock.lockfileVersion).toBe(3);
    const entries = Object.entries(lock.packages).filter(([p]) => p !== '');
    expect(entries.map(([p]) => p).sort()).toEqual([
      'node_modules/@scope/util', 'node_modules/aliased', 'node_modules/good-server', 'node_modules/leaf',
      'node_modules/plat-darwin', 'node_modules/plat-here', 'node_modules/plat-ppc',
    ]);
    // The empty --userconfig kept npm from omitting `resolved` (this machine's ~/.npmrc does).
    for (const [p, entry] of entries) {
      const name = entry.name ?? p.slice('node_modules/'.length);
      expect(entry.resolved, p).toBe(canonicalTarball(registry.url, name, entry.version ?? ''));
      expect(entry.integrity, p).toMatch(/^sha512-/);
    }
    expect(lock.packages['node_modules/aliased']).toMatchObject({ name: 'real-pkg', version: '1.4.0' });
    expect(lock.packages['node_modules/good-server']?.dependencies?.aliased).toBe('npm:real-pkg@^1.0.0');
    // Optional platform packages are locked whether or not they fit this machine.
    expect(lock.packages['node_modules/plat-darwin']).toMatchObject({ optional: true, os: ['darwin'], cpu: ['arm64'] });
    expect(lock.packages['node_modules/plat-ppc']).toMatchObject({ optional: true, cpu: ['ppc64'] });
    expect(lock.packages['node_modules/plat-here']).toMatchObject({ optional: true, os: [process.platform], cpu: [process.arch] });
  });

  it('rejects a git dependency', async () => {
    const { lock } = await locks.git;
    const entry = lock.packages['node_modules/gitdep'];
    expect(entry?.resolved).toMatch(new RegExp(`^git\\+file://${gitRepo}#[0-9a-f]{40}$`));
    expect(entry?.integrity).toBeUndefined();
    const problems = verifyLockfile(lock, { name: 'git-server', version: '1.0.0' }, registry.url);
    expect(flagged(problems)).toEqual([at('node_modules/git-server') + '.dependencies.gitdep', at('node_modules/gitdep')].sort());
    expect(lines(problems)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^packages\["node_modules\/gitdep"\]: resolves to git\+file:/),
      `${at('node_modules/gitdep')}: has no sha512 integrity`,
      expect.stringMatching(/^packages\["node_modules\/git-server"\]\.dependencies\.gitdep: has the spec "git\+file:.*only semver ranges/),
    ]));
  });

  it('rejects a tarball-URL dependency on the registry host (only its spec shows it)', async () => {
    const { lock } = await locks.url;
    // What npm locks looks exactly like a registry package...
    expect(lock.packages['node_modules/target']).toMatchObject({ resolved: registry.tarballUrl('target', '1.0.0'), integrity: expect.stringMatching(/^sha512-/) });
    const problems = verifyLockfile(lock, { name: 'url-server', version: '1.0.0' }, registry.url);
    // ...so the spec in the parent is the only thing to reject.
    expect(lines(problems)).toEqual([
      `${at('node_modules/url-server')}.dependencies.target: has the spec ${JSON.stringify(registry.tarballUrl('target', '1.0.0'))}: only semver ranges and npm: aliases are allowed`,
    ]);
  });

  it('rejects a file: tarball dependency', async () => {
    const { lock } = await locks.file;
    expect(lock.packages['node_modules/target']?.resolved).toMatch(/^file:.*target-1\.0\.0\.tgz$/);
    const problems = verifyLockfile(lock, { name: 'file-server', version: '1.0.0' }, registry.url);
    expect(flagged(problems)).toEqual([at('node_modules/file-server') + '.dependencies.target', at('node_modules/target')].sort());
    expect(lines(problems)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^packages\["node_modules\/target"\]: resolves to file:/),
      expect.stringMatching(/^packages\["node_modules\/file-server"\]\.dependencies\.target: has the spec "file:/),
    ]));
  });

  it('rejects a link to a local directory and the entry outside node_modules', async () => {
    const { lock, dir } = await locks.link;
    const target = path.relative(dir, linkDir);
    expect(lock.packages['node_modules/linked']).toEqual({ resolved: target, link: true });
    expect(lock.packages[target]).toMatchObject({ name: 'linked', version: '1.0.0' });
    const problems = verifyLockfile(lock, { name: 'link-server', version: '1.0.0' }, registry.url);
    expect(lines(problems).sort()).toEqual([
      `${at('node_modules/link-server')}.dependencies.linked: has the spec ${JSON.stringify(`file:${linkDir}`)}: only semver ranges and npm: aliases are allowed`,
      `${at('node_modules/linked')}: is a link to a local directory`,
      `${at(target)}: is outside node_modules/ (a workspace or local package)`,
    ].sort());
  });

  it('rejects a bundled dependency', async () => {
    const { lock } = await locks.bundle;
    expect(lock.packages['node_modules/bundle-server/node_modules/bundled']).toEqual({ version: '1.0.0', inBundle: true });
    const problems = verifyLockfile(lock, { name: 'bundle-server', version: '1.0.0' }, registry.url);
    expect(lines(problems)).toEqual([`${at('node_modules/bundle-server/node_modules/bundled')}: is bundled inside another package (no resolved URL or integrity of its own)`]);
  });

  it('rejects a package from another registry (scoped registry setting)', async () => {
    const { lock } = await locks.other;
    expect(lock.packages['node_modules/@other/evil']?.resolved).toBe(other.tarballUrl('@other/evil', '1.0.0'));
    const problems = verifyLockfile(lock, { name: 'other-server', version: '1.0.0' }, registry.url);
    expect(lines(problems)).toEqual([
      `${at('node_modules/@other/evil')}: resolves to ${other.tarballUrl('@other/evil', '1.0.0')}, not ${registry.tarballUrl('@other/evil', '1.0.0')}`,
    ]);
  });

  it('rejects a sha1-only package (npm locks a sha1 integrity)', async () => {
    const { lock } = await locks.sha1;
    expect(lock.packages['node_modules/old-sha1']).toMatchObject({ resolved: registry.tarballUrl('old-sha1', '1.0.0'), integrity: expect.stringMatching(/^sha1-[A-Za-z0-9+/]+=*$/) });
    const problems = verifyLockfile(lock, { name: 'sha1-server', version: '1.0.0' }, registry.url);
    expect(lines(problems)).toEqual([`${at('node_modules/old-sha1')}: has no sha512 integrity`]);
  });

  it('rejects a lockfile v2 of an otherwise good tree', async () => {
    const { lock } = await locks.v2;
    expect(lock.lockfileVersion).toBe(2);
    expect(lines(verifyLockfile(lock, { name: 'good-server', version: '1.0.0' }, registry.url))).toEqual(['/lockfileVersion: must be 3, not 2']);
  });
});
