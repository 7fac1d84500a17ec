import { createRequire } from 'node:module';
import type * as Semver from 'semver';

/**
 * semver, required when an install first needs it: its 47 files cost every daemon start
 * tens of milliseconds, and most runs install nothing. Synchronous (semver is CommonJS),
 * because the checks that use it are.
 */
let loaded: typeof Semver | undefined;

export function semver(): typeof Semver {
  return (loaded ??= createRequire(import.meta.url)('semver') as typeof Semver);
}
