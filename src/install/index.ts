export { verifyLockfile, canonicalTarball, isAcceptableSpec, isPackageName, type LockProblem } from './lockfile.js';
