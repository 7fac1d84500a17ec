export { verifyLockfile, canonicalTarball, isAcceptableSpec, isPackageName, type LockProblem } from './lockfile.js';
export { findRuntime, DEFAULT_RUNTIME_DIRS, MIN_NPM_MAJOR, type Runtime } from './runtime.js';
