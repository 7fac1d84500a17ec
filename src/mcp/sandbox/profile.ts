import path from 'node:path';
import { LIMITS, WispError } from '../../core/index.js';
import type { SandboxProfile } from '../service-store-schema.js';

/**
 * A sandbox profile and what it grants at one launch, worked out from facts gathered
 * beforehand (runtime-needs.ts): pure, so the argument builders (bwrap.ts, macos.ts) and the
 * trust prompts all read one plan, and unit tests check it without a file system.
 */

export type { SandboxProfile };
export type NetPolicy = SandboxProfile['net'];

/** Services registered from now on: no network, their cwd read-write, nothing else of yours. */
export function defaultProfile(): SandboxProfile {
  return { enabled: true, read: [], write: [], net: { mode: 'none' } };
}

/** Why a path is visible in the sandbox: what the trust prompt says next to it. */
export type MountWhy = 'system' | 'runtime' | 'interpreter' | 'script' | 'venv' | 'cwd' | 'granted';

export interface Mount {
  readonly path: string;
  /** read: read-only; write: read-write; tmpfs: a private, empty directory (home, /tmp). */
  readonly access: 'read' | 'write' | 'tmpfs';
  readonly why: MountWhy | 'home' | 'tmp';
}

/** A path the command needs to run (runtime-needs.ts): granted read-only, and shown. */
export interface Need {
  readonly path: string;
  readonly why: Exclude<MountWhy, 'system' | 'cwd' | 'granted'>;
}

/** A path an argument names that no grant covers: offered in the trust prompt, never granted by itself. */
export interface Offer {
  readonly field: string;
  readonly path: string;
}

/** A system directory as it is on this machine: merged-/usr systems have /bin -> usr/bin. */
export type SystemEntry = { readonly path: string; readonly kind: 'dir' } | { readonly path: string; readonly kind: 'symlink'; readonly target: string };

export interface LaunchFacts {
  /** The HOME the server will see (a private, empty directory at that path). */
  readonly home: string;
  readonly cwd: string | null;
  /** The system directories that exist here (lstat), read-only. */
  readonly system: readonly SystemEntry[];
  /** The command's runtime, interpreter, script or package (runtime-needs.ts). */
  readonly needs: readonly Need[];
  /** The service's args as launched, for the paths they name. */
  readonly args: readonly string[];
}

/** The network a launch gets: its own loopback only, the host's, or (host grants, `ask`) the daemon's egress proxy and nothing else. */
export type NetworkNow = 'none' | 'host' | 'proxy';

export interface SandboxPlan {
  readonly mounts: readonly Mount[];
  readonly symlinks: readonly { readonly path: string; readonly target: string }[];
  readonly home: string;
  /** Where the server starts: its cwd, or its private home. */
  readonly chdir: string;
  readonly network: NetworkNow;
  readonly offered: readonly Offer[];
}

/** The directories every program needs read-only (never /etc whole: the files below). */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/nix/store'] as const;

/**
 * Of /etc, only what the C library, TLS and name resolution read. Not passwd or group
 * (a one-user copy is generated: bwrap.ts), not shadow, not anything with a secret.
 */
export const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/host.conf',
  '/etc/hosts',
  '/etc/gai.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki',
  '/etc/crypto-policies',
] as const;

/** Only with the host's network: the resolver's configuration. */
export const ETC_NETWORK_FILES = ['/etc/resolv.conf', '/etc/services', '/etc/protocols'] as const;

/** Whether `inner` is `outer` or below it (both normalized, absolute). */
export function within(inner: string, outer: string): boolean {
  return inner === outer || outer === '/' || inner.startsWith(`${outer}/`);
}

function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1;
}

const ACCESS_ORDER = { tmpfs: 0, read: 1, write: 2 } as const;

/**
 * Every mount of a launch, ancestors before descendants (a bind inside the private home
 * must come after the home's tmpfs), one per path: at the same path write beats read beats
 * tmpfs, so a cwd that is the home directory is the real one, read-write, as asked.
 */
export function orderMounts(mounts: readonly Mount[]): Mount[] {
  const byPath = new Map<string, Mount>();
  for (const mount of mounts) {
    const seen = byPath.get(mount.path);
    if (seen === undefined || ACCESS_ORDER[mount.access] > ACCESS_ORDER[seen.access]) byPath.set(mount.path, mount);
  }
  return [...byPath.values()].sort((a, b) => depth(a.path) - depth(b.path) || a.path.localeCompare(b.path));
}

/** The plan of one launch: the profile's grants and the facts, nothing else. */
export function planLaunch(profile: SandboxProfile, facts: LaunchFacts): SandboxPlan {
  const systemDirs = facts.system.filter((entry) => entry.kind === 'dir').map((entry) => entry.path);
  const bySystem = (p: string): boolean => systemDirs.some((dir) => within(p, dir));
  const network: NetworkNow = profile.net.mode === 'all' ? 'host' : profile.net.mode === 'none' ? 'none' : 'proxy';
  const etc = [...ETC_FILES, ...(network === 'host' ? ETC_NETWORK_FILES : [])];
  const mounts = orderMounts([
    ...systemDirs.map((p): Mount => ({ path: p, access: 'read', why: 'system' })),
    ...etc.map((p): Mount => ({ path: p, access: 'read', why: 'system' })),
    { path: '/tmp', access: 'tmpfs', why: 'tmp' },
    { path: facts.home, access: 'tmpfs', why: 'home' },
    ...facts.needs.filter((need) => !bySystem(need.path)).map((need): Mount => ({ path: need.path, access: 'read', why: need.why })),
    ...profile.read.map((p): Mount => ({ path: p, access: 'read', why: 'granted' })),
    ...profile.write.map((p): Mount => ({ path: p, access: 'write', why: 'granted' })),
    ...(facts.cwd !== null ? [{ path: facts.cwd, access: 'write', why: 'cwd' } as const] : []),
  ]);
  const symlinks = facts.system.flatMap((entry) => (entry.kind === 'symlink' ? [{ path: entry.path, target: entry.target }] : []));
  return {
    mounts,
    symlinks,
    home: facts.home,
    chdir: facts.cwd ?? facts.home,
    network,
    offered: offeredPaths(facts.args, facts.home, mounts),
  };
}

/** Where the sandbox has its own: a path there is visible, though not the host's file of that name. */
const OWN_TREES = ['/dev', '/proc'];

/**
 * The paths args name (`/home/me/docs`, `--root=/srv/x`, `~/notes`) that no read or write
 * mount covers. A path under the private home or /tmp counts as not covered: the server
 * would see an empty directory there, not the user's files.
 */
export function offeredPaths(args: readonly string[], home: string, mounts: readonly Mount[]): Offer[] {
  const offers: Offer[] = [];
  args.forEach((arg, index) => {
    const named = namedPath(arg, home);
    if (named === undefined || OWN_TREES.some((tree) => within(named, tree))) return;
    // The innermost mount over it decides: a tmpfs (home, /tmp) hides what is really there.
    const over = mounts.filter((mount) => within(named, mount.path)).at(-1);
    if (over !== undefined && over.access !== 'tmpfs') return;
    if (!offers.some((offer) => offer.path === named)) offers.push({ field: `args[${index}]`, path: named });
  });
  return offers;
}

/** The absolute path an argument names, if it names one. */
function namedPath(arg: string, home: string): string | undefined {
  const value = arg.startsWith('-') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
  if (value.startsWith('~/')) return path.join(home, value.slice(2));
  if (!value.startsWith('/') || value.includes('\0')) return undefined;
  return trimSlash(path.normalize(value));
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/** A file grant as stored: absolute, normalized (no `..`, no trailing slash), no NUL or line break. */
export function normalizeGrantPath(raw: string, field: string): string {
  if (!path.isAbsolute(raw)) throw new WispError('INVALID_CONFIG', `${field}: ${JSON.stringify(raw)} is not an absolute path`, { field });
  if (/[\0\r\n]/.test(raw)) throw new WispError('INVALID_CONFIG', `${field}: a path must not contain NUL or a line break`, { field });
  return trimSlash(path.normalize(raw));
}

/** A network grant as stored: lower case, a port in range. */
export function normalizeHostGrant(raw: string, field: string): string {
  const grant = raw.toLowerCase();
  const port = /:([0-9]+)$/.exec(grant)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new WispError('INVALID_CONFIG', `${field}: port ${port} is out of range (1-65535)`, { field });
  }
  return grant;
}

/** Checks and normalizes a profile given by a client (paths absolute, hosts lower case, no duplicates, within the limits). */
export function normalizeProfile(profile: SandboxProfile): SandboxProfile {
  const unique = (list: readonly string[]): string[] => [...new Set(list)];
  const read = unique(profile.read.map((p, i) => normalizeGrantPath(p, `sandbox.read[${i}]`)));
  const write = unique(profile.write.map((p, i) => normalizeGrantPath(p, `sandbox.write[${i}]`)));
  for (const list of [read, write]) {
    if (list.length > LIMITS.maxSandboxGrants) throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxSandboxGrants} file grants of each kind`, { limit: 'maxSandboxGrants', max: LIMITS.maxSandboxGrants });
  }
  const hosts = (list: readonly string[]): string[] => unique(list.map((h, i) => normalizeHostGrant(h, `sandbox.net.hosts[${i}]`)));
  const { net: given } = profile;
  const net: NetPolicy =
    given.mode === 'hosts' ? { mode: 'hosts', hosts: hosts(given.hosts) } : given.mode === 'ask' && given.hosts !== undefined && given.hosts.length > 0 ? { mode: 'ask', hosts: hosts(given.hosts) } : { mode: given.mode };
  return { enabled: profile.enabled, read: read.filter((p) => !write.includes(p)), write, net };
}

/** Whether two profiles grant the same (a sync that changes nothing keeps the service as it is). */
export function sameProfile(a: SandboxProfile | undefined, b: SandboxProfile | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
