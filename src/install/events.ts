import type { Step } from '../core/index.js';
import type { AttemptRecord } from './attempt-run.js';
import type { InstallPlan } from './plan.js';

/** What the installer announces (the daemon's bridge turns it into install.progress / install.finished). */
export type InstallEvent =
  | { readonly kind: 'install.progress'; readonly plan: InstallPlan; readonly step: Step; readonly status: 'started' | 'done'; readonly pid: number | null }
  | { readonly kind: 'install.finished'; readonly attempt: AttemptRecord };
