import type { Result, Service } from '../../core/index.js';
import { clean, cleanBlock, showArg, table } from '../render.js';

/** Install plans, attempts and settings, and the progress bar of a running install. */

type Attempt = Result<'installs.get'>['attempt'];
type Plan = Result<'installs.plan'>['plan'];

/** The plan as the daemon made it (installs.plan), bound by its digest; every field cleaned. */
export function planText(plan: Plan): string {
  return [
    `Install ${clean(plan.package)}@${clean(plan.version)} (npm ${clean(plan.runtime.npmVersion)}, node ${clean(plan.runtime.nodeVersion)})`,
    `  from:       ${clean(plan.registry)}`,
    `  into:       ${showArg(plan.directory)}`,
    `  then run:   ${showArg(plan.bin)}${plan.args.length > 0 ? ` ${plan.args.map(showArg).join(' ')}` : ''} (registered disabled)`,
    '  it will:',
    ...plan.will.map((line) => `    - ${clean(line)}`),
    '  it will not:',
    ...plan.wont.map((line) => `    - ${clean(line)}`),
  ].join('\n');
}

export function installQuestion(plan: Plan): string {
  return `Install ${clean(plan.package)}@${clean(plan.version)}? [y/N] `;
}

export interface ProgressBar {
  /** Step `index` (1-based) of `total` has started: the bar shows the steps before it done. */
  readonly step: (index: number, total: number, step: string) => void;
  /**
   * The install ended. Succeeded: the bar is drawn full (`[####...####] 6/6 done`) and left
   * standing, so its last word is the whole install, not the last step started. Failed: on a
   * terminal the line is cleared for the error; on a pipe, the steps shown stay as they were.
   */
  readonly end: (succeeded: boolean) => void;
}

const BAR_WIDTH = 24;

/** Step N of M on one rewritten line (a terminal), or one line per step (a pipe). */
export function progressBar(err: (text: string) => void, tty: boolean): ProgressBar {
  let shown = false;
  let last = 0;
  const draw = (filled: number, label: string): void => {
    const line = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${label}`;
    shown = true;
    if (tty) process.stderr.write(`\r\u001b[K${line}`);
    else err(line);
  };
  return {
    step: (index, total, step) => {
      last = total;
      draw(Math.round((BAR_WIDTH * (index - 1)) / total), `${index}/${total} ${clean(step.replace('_', ' '))}`);
    },
    end: (succeeded) => {
      if (!shown) return;
      if (succeeded) {
        draw(BAR_WIDTH, `${last}/${last} done`);
        if (tty) process.stderr.write('\n');
      } else if (tty) process.stderr.write('\r\u001b[K');
    },
  };
}

export function installedText(service: Service, attempt: Attempt, reused: boolean): string {
  return [
    `${reused ? 'already installed' : 'installed'} ${clean(attempt.package)}@${clean(attempt.version)} (${attempt.lockedPackages} packages verified)`,
    ...(attempt.installScripts.length > 0 ? [`install scripts declared, NOT run: ${clean(attempt.installScripts.join(', '))}`] : []),
    `registered ${clean(service.name)} (disabled): ${showArg(service.command)} ${service.args.map(showArg).join(' ')}`,
    `trust and start it with: wispctl mcp activate ${clean(service.name)}`,
  ].join('\n');
}

export function attemptsTable(attempts: readonly Attempt[]): string {
  if (attempts.length === 0) return 'no installs';
  return table(
    ['DIGEST', 'PACKAGE', 'STATUS', 'SERVICE', 'STARTED'],
    attempts.map((a) => [a.digest, `${a.package}@${a.version}`, a.status + (a.error !== null ? ` (${a.error.code})` : ''), a.serviceName ?? '-', a.startedAt]),
  );
}

export function attemptText(a: Attempt): string {
  return [
    `${clean(a.package)}@${clean(a.version)}: ${a.status}${a.step !== null ? ` (last step: ${a.step})` : ''}`,
    `digest:     ${clean(a.digest)}`,
    `registry:   ${clean(a.registry)}`,
    `directory:  ${showArg(a.directory)}`,
    `bin, args:  ${showArg(a.bin)} ${a.args.map(showArg).join(' ')}`,
    `runtime:    node ${clean(a.runtime.nodeVersion)}, npm ${clean(a.runtime.npmVersion)}`,
    `started:    ${clean(a.startedAt)}${a.endedAt !== null ? `, ended ${clean(a.endedAt)}` : ''}`,
    `packages:   ${a.lockedPackages}${a.installScripts.length > 0 ? `; install scripts declared, NOT run: ${clean(a.installScripts.join(', '))}` : ''}`,
    ...(a.serviceName !== null ? [`service:    ${clean(a.serviceName)} (${clean(a.serviceId)})`] : []),
    ...(a.error !== null ? [`error:      ${clean(a.error.code)}: ${cleanBlock(a.error.message, '  ')}`, ...(a.error.problems ?? []).map((p) => `  ${clean(p.path)}: ${clean(p.problem)}`)] : []),
    // npm's output is untrusted (packages print what they like): each line cleaned and indented.
    ...(a.logTail.trim() !== '' ? ['npm output (tail):', `  ${cleanBlock(a.logTail.trimEnd(), '  ')}`] : []),
  ].join('\n');
}

export function installSettingsText(settings: Result<'installs.getSettings'>['settings']): string {
  return [
    `runtime dirs: ${settings.runtimeDirs.map(showArg).join(', ')}`,
    `registry:     ${clean(settings.registry ?? '(npm\'s built-in default)')}`,
    `CA file:      ${settings.caFile !== null ? showArg(settings.caFile) : '(none)'}`,
    `time limit:   ${settings.timeoutMs} ms`,
    `sandbox:      ${settings.sandbox ? 'on (npm sees the install directory, its own cache and config, and the registry\'s host only)' : 'OFF: npm runs as you, with your files and the whole network (wispctl install settings --sandbox)'}`,
  ].join('\n');
}

export function cancelledText(cancelled: boolean, digest: string): string {
  return cancelled ? `cancelled ${clean(digest)}` : `nothing of ${clean(digest)} was running`;
}

export function discardedText(discarded: Result<'installs.discard'>['discarded']): string {
  return `discarded ${clean(discarded.package)}@${clean(discarded.version)} (${discarded.status}); removed ${showArg(discarded.directory)}`;
}

/** The problems an install failure lists (details.problems), one indented line each. */
export function problemLines(problems: readonly { path: unknown; problem: unknown }[]): string[] {
  return problems.map((p) => `  ${clean(String(p.path))}: ${clean(String(p.problem))}`);
}
