import path from 'node:path';
import { semver } from './semver.js';
import { LIMITS, WispError, type InstallPlanView } from '../core/index.js';
import { canonicalJson, sha256Hex } from '../util/index.js';
import { isPackageName } from './lockfile.js';

export interface PlanInput {
  readonly package: string;
  readonly version: string;
  readonly bin: string;
  readonly args: readonly string[];
}

/**
 * What an install will do, shown before it is approved (installs.plan shows it with the
 * runtime found). The digest covers every field that changes the outcome.
 */
export type InstallPlan = Readonly<Omit<InstallPlanView, 'runtime'>>;

const BIN_NAME = /^[A-Za-z0-9@][A-Za-z0-9._@/-]{0,213}$/;

/**
 * Checks the request: a full package name, an EXACT version (no range, tag, URL, git,
 * file or directory spec), a bin name, and launch arguments. Anything else is refused
 * with INVALID_PLAN before npm is involved.
 */
export function checkPlanInput(input: PlanInput): void {
  const bad = (field: string, message: string): never => {
    throw new WispError('INVALID_PLAN', message, { field });
  };
  if (!isPackageName(input.package)) bad('package', `${JSON.stringify(input.package)} is not a full npm package name (like name or @scope/name)`);
  if (semver().valid(input.version) === null || semver().clean(input.version) !== input.version) {
    bad('version', `${JSON.stringify(input.version)} is not an exact version (like 1.2.3): ranges, tags, URLs, git and file specs are refused`);
  }
  if (!BIN_NAME.test(input.bin) || input.bin.includes('..')) bad('bin', `${JSON.stringify(input.bin)} is not a bin name`);
  if (input.args.length > LIMITS.maxArgs) bad('args', `at most ${LIMITS.maxArgs} launch arguments`);
  for (const arg of input.args) if (arg.includes('\u0000') || arg.length > LIMITS.maxCommandChars) bad('args', 'a launch argument is too long or contains NUL');
}

/** The plan for an install from `registry` into `<installsDir>/<digest>/`. */
export function makePlan(input: PlanInput, registry: string, installsDir: string): InstallPlan {
  checkPlanInput(input);
  const fields = { package: input.package, version: input.version, bin: input.bin, args: [...input.args], registry };
  const digest = sha256Hex(canonicalJson(fields)).slice(0, 32);
  const directory = path.join(installsDir, digest);
  return {
    ...fields,
    digest,
    directory,
    will: [
      `write ${path.join(directory, 'package.json')} depending on exactly ${input.package}@${input.version}`,
      `lock the dependency tree with npm (package-lock.json) from ${registry}`,
      'verify every locked package: from that registry, at its canonical tarball URL, with a sha512 integrity; no git, URL, file, directory, link or bundled packages',
      `run npm ci with install scripts disabled, then check the bin ${input.bin} is a JavaScript file inside the package`,
      `register a DISABLED service running ${input.bin}${input.args.length > 0 ? ` with ${input.args.join(' ')}` : ''} (starting it needs its own approval)`,
    ],
    wont: [
      'run any install script (preinstall, install, postinstall, prepare)',
      'use your npm configuration, credentials or environment',
      'start the server, or set any environment variable or secret',
      'uninstall anything later: deleting the service leaves the directory',
    ],
  };
}

/** A service name from the bin name (`@scope/x` -> `x`), made unique against `taken`. */
export function serviceNameFor(bin: string, taken: (name: string) => boolean): string {
  const base = (bin.split('/').pop() ?? 'mcp').replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 56) || 'mcp';
  if (!taken(base)) return base;
  for (let n = 2; ; n++) if (!taken(`${base}-${n}`)) return `${base}-${n}`;
}
