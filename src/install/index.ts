export { verifyLockfile, canonicalTarball, isAcceptableSpec, isPackageName, type LockProblem } from './lockfile.js';
export { findRuntime, DEFAULT_RUNTIME_DIRS, MIN_NPM_MAJOR, type Runtime } from './runtime.js';
export { makePlan, checkPlanInput, serviceNameFor, type InstallPlan, type PlanInput } from './plan.js';
export { Installer, STEPS, type AttemptRecord, type InstallOutcome, type Step } from './installer.js';
export { attemptView } from './attempt-run.js';
export { InstallSettingsStore, type InstallSettings, type InstallSettingsChange } from './settings.js';
export type { InstallEvent } from './events.js';
export { npmContainRequest, registryEgress, runNpm, commonFlags, npmEnvironment, prepareSandbox, type ContainNpm, type NpmContainRequest, type NpmContainer, type NpmSandbox } from './npm-runner.js';
