import { semver } from './semver.js';
import type { AttemptError } from '../core/index.js';

/**
 * The lockfile verifier: every package npm locked must come from the allowed registry, at
 * its canonical tarball URL, with sha512 integrity, and be declared by a semver range (or
 * an npm: alias). Our own rather than lockfile-lint: that one missed link, inBundle and
 * tarball-URL-spec cases (see the team's platform notes), and this is the supply-chain
 * gate, so it is small enough to read whole.
 */

/** One locked package that failed verification: a refused attempt's error lists them (the wire's shape). */
export type LockProblem = Readonly<NonNullable<AttemptError['problems']>[number]>;

interface LockEntry {
  name?: unknown;
  version?: unknown;
  resolved?: unknown;
  integrity?: unknown;
  link?: unknown;
  inBundle?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
}

/** The registry's canonical tarball URL for a package version. */
export function canonicalTarball(registry: string, name: string, version: string): string {
  const base = registry.replace(/\/+$/, '');
  const bare = name.startsWith('@') ? name.slice(name.indexOf('/') + 1) : name;
  return `${base}/${name}/-/${bare}-${version}.tgz`;
}

/** A dependency spec we accept: a semver range, or `npm:<name>@<range>`. Never a URL, git, file or path. */
export function isAcceptableSpec(spec: unknown): boolean {
  if (typeof spec !== 'string') return false;
  if (spec.startsWith('npm:')) {
    const rest = spec.slice(4);
    const at = rest.lastIndexOf('@');
    if (at <= 0) return false;
    return isPackageName(rest.slice(0, at)) && semver().validRange(rest.slice(at + 1)) !== null;
  }
  if (/^[a-z+]+:/i.test(spec) || spec.includes('/')) return false; // URLs, git, file:, github shorthand, paths
  return semver().validRange(spec) !== null;
}

export function isPackageName(name: string): boolean {
  return /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(name) && name.length <= 214;
}

/** The package a lock entry holds: its own `name` (aliases), else the last path segment after node_modules/. */
function packageNameOf(path: string, entry: LockEntry): string {
  if (typeof entry.name === 'string') return entry.name;
  const parts = path.split('node_modules/');
  return (parts[parts.length - 1] ?? '').replace(/\/$/, '');
}

/**
 * Checks a package-lock.json (v3) for a plan that depends on exactly `expected.name` at
 * `expected.version`. Returns every problem found; an empty list means it may be installed.
 */
export function verifyLockfile(lock: unknown, expected: { name: string; version: string }, registry: string): LockProblem[] {
  const problems: LockProblem[] = [];
  const add = (path: string, problem: string): void => void problems.push({ path, problem });
  if (typeof lock !== 'object' || lock === null) return [{ path: '/', problem: 'not a JSON object' }];
  const doc = lock as { lockfileVersion?: unknown; packages?: unknown };
  if (doc.lockfileVersion !== 3) add('/lockfileVersion', `must be 3, not ${JSON.stringify(doc.lockfileVersion)}`);
  if (typeof doc.packages !== 'object' || doc.packages === null) return [...problems, { path: '/packages', problem: 'missing' }];
  const packages = doc.packages as Record<string, LockEntry>;

  const root = packages[''];
  const rootDeps = (root?.dependencies ?? {}) as Record<string, unknown>;
  if (Object.keys(rootDeps).length !== 1 || rootDeps[expected.name] !== expected.version) {
    add('packages[""]', `must depend on exactly ${expected.name}@${expected.version}`);
  }
  for (const field of ['optionalDependencies', 'peerDependencies', 'devDependencies'] as const) {
    if (root !== undefined && (root as Record<string, unknown>)[field] !== undefined) add(`packages[""].${field}`, 'must not exist');
  }

  for (const [path, entry] of Object.entries(packages)) {
    if (path === '') continue;
    const where = `packages[${JSON.stringify(path)}]`;
    if (!path.startsWith('node_modules/')) {
      add(where, 'is outside node_modules/ (a workspace or local package)');
      continue;
    }
    if (entry.link === true) {
      add(where, 'is a link to a local directory');
      continue;
    }
    if (entry.inBundle === true) {
      add(where, 'is bundled inside another package (no resolved URL or integrity of its own)');
      continue;
    }
    const name = packageNameOf(path, entry);
    if (!isPackageName(name)) add(where, `has an invalid package name ${JSON.stringify(name)}`);
    if (typeof entry.version !== 'string' || semver().valid(entry.version) === null) {
      add(where, `has no exact version (${JSON.stringify(entry.version)})`);
      continue;
    }
    if (typeof entry.resolved !== 'string') add(where, 'has no resolved URL');
    else if (entry.resolved !== canonicalTarball(registry, name, entry.version)) {
      add(where, `resolves to ${entry.resolved}, not ${canonicalTarball(registry, name, entry.version)}`);
    }
    if (typeof entry.integrity !== 'string' || !/^sha512-[A-Za-z0-9+/]+={0,2}$/.test(entry.integrity)) add(where, 'has no sha512 integrity');
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
      const specs = entry[field];
      if (specs === undefined) continue;
      if (typeof specs !== 'object' || specs === null) {
        add(`${where}.${field}`, 'is not an object');
        continue;
      }
      for (const [dep, spec] of Object.entries(specs as Record<string, unknown>)) {
        if (!isAcceptableSpec(spec)) add(`${where}.${field}.${dep}`, `has the spec ${JSON.stringify(spec)}: only semver ranges and npm: aliases are allowed`);
      }
    }
  }
  if (packages[`node_modules/${expected.name}`] === undefined) add(`packages["node_modules/${expected.name}"]`, 'is missing');
  return problems;
}
