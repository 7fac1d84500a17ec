import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { WispClient } from '../control/client.js';
import { EXIT, WispError, type Result, type Service } from '../core/index.js';
import { clean, cleanBlock, fitToTerminal, showArg, table } from './render.js';

type Attempt = Result<'installs.get'>['attempt'];

export interface InstallCliContext {
  readonly withClient: <T>(fn: (client: WispClient) => Promise<T>) => Promise<T>;
  readonly print: (value: unknown, human: () => string) => void;
  readonly err: (text: string) => void;
  readonly json: () => boolean;
}

/** `name@1.2.3` or `@scope/name@1.2.3` -> package and version (the daemon checks the version is exact). */
export function parsePackageSpec(spec: string): { package: string; version: string } {
  const at = spec.lastIndexOf('@');
  if (at <= 0) throw new WispError('INVALID_PLAN', `give the package with an exact version, like ${spec}@1.2.3`, { field: 'version' });
  return { package: spec.slice(0, at), version: spec.slice(at + 1) };
}

/** wispctl install PKG@VERSION --bin NAME [-- ARGS], and install list|show|cancel|discard|settings. */
export function addInstallCommands(program: Command, ctx: InstallCliContext): void {
  const install = program
    .command('install')
    .description('install an MCP server from the npm registry (exact version, verified, no install scripts) and register it disabled');

  install
    .command('run', { isDefault: true, hidden: true })
    .description('install PKG@VERSION: show the plan, ask, install with a progress bar, print the registered service')
    .argument('<spec>', 'package@exact-version, e.g. @modelcontextprotocol/server-everything@2026.8.31')
    .argument('[args...]', 'launch arguments for the server (after --)')
    .requiredOption('--bin <name>', 'the package\'s JavaScript bin to run')
    .option('-y, --yes', 'do not ask (for scripts); the plan shown is what gets approved')
    .action((spec: string, args: string[], opts: { bin: string; yes?: boolean }) =>
      ctx.withClient(async (client) => {
        const { plan } = await client.call('installs.plan', { ...parsePackageSpec(spec), bin: opts.bin, args });
        // The plan is the daemon's (installs.plan), bound by its digest; every field cleaned.
        ctx.err(
          fitToTerminal(
            [
              `Install ${clean(plan.package)}@${clean(plan.version)} (npm ${clean(plan.runtime.npmVersion)}, node ${clean(plan.runtime.nodeVersion)})`,
              `  from:       ${clean(plan.registry)}`,
              `  into:       ${showArg(plan.directory)}`,
              `  then run:   ${showArg(plan.bin)}${plan.args.length > 0 ? ` ${plan.args.map(showArg).join(' ')}` : ''} (registered disabled)`,
              '  it will:',
              ...plan.will.map((line) => `    - ${clean(line)}`),
              '  it will not:',
              ...plan.wont.map((line) => `    - ${clean(line)}`),
            ].join('\n'),
            process.stderr.isTTY ? process.stderr.columns : undefined,
          ),
        );
        const me = (await client.call('daemon.status')).you.clientId;
        const interactive = process.stdin.isTTY && !ctx.json();
        const bar = progressBar(ctx.err, process.stderr.isTTY && !ctx.json());
        client.onEvent((event) => {
          // Only the approval bound to the plan shown above is answered here.
          if (event.type === 'approval.requested' && event.approval.requester.clientId === me && event.approval.kind === 'install' && event.approval.binding.planDigest === plan.digest) {
            const id = event.approval.id;
            if (opts.yes === true) {
              void client.call('approvals.respond', { id, decision: 'approve' }).catch((error: unknown) => ctx.err(clean(String(error))));
            } else if (!interactive) {
              ctx.err(`waiting for a human: wispctl approve ${clean(id)} (or deny)`);
            } else {
              const rl = createInterface({ input: process.stdin, output: process.stderr });
              void rl.question(`Install ${clean(plan.package)}@${clean(plan.version)}? [y/N] `).then(async (answer) => {
                rl.close();
                const decision = /^y(es)?$/i.test(answer.trim()) ? 'approve' : 'deny';
                await client.call('approvals.respond', { id, decision }).catch((error: unknown) => ctx.err(clean(String(error))));
              });
            }
          } else if (event.type === 'install.progress' && event.install.digest === plan.digest && event.status === 'started' && event.pid === null) {
            bar(event.index, event.total, event.step);
          }
        });
        await client.call('events.subscribe', {});
        try {
          const result = await client.call('installs.start', { planDigest: plan.digest });
          bar(0, 0, '');
          ctx.print(result, () => installedText(result.service, result.attempt, result.reused));
        } catch (error) {
          bar(0, 0, '');
          if (error instanceof WispError && error.code === 'APPROVAL_DENIED') {
            ctx.err('not installed');
            process.exitCode = EXIT.refused;
            return;
          }
          if (error instanceof WispError && Array.isArray(error.details.problems)) {
            for (const p of error.details.problems as { path: unknown; problem: unknown }[]) ctx.err(`  ${clean(String(p.path))}: ${clean(String(p.problem))}`);
          }
          throw error;
        }
      }),
    );

  install
    .command('list')
    .description('every install attempt, newest first')
    .action(() =>
      ctx.withClient(async (client) => {
        const { attempts } = await client.call('installs.list');
        ctx.print(attempts, () =>
          attempts.length === 0
            ? 'no installs'
            : table(
                ['DIGEST', 'PACKAGE', 'STATUS', 'SERVICE', 'STARTED'],
                attempts.map((a) => [a.digest, `${a.package}@${a.version}`, a.status + (a.error !== null ? ` (${a.error.code})` : ''), a.serviceName ?? '-', a.startedAt]),
              ),
        );
      }),
    );

  install
    .command('show')
    .description('one attempt: its steps, outcome, packages with install scripts (never run) and npm\'s log tail')
    .argument('<digest>', 'plan digest (wispctl install list)')
    .action((digest: string) =>
      ctx.withClient(async (client) => {
        const { attempt } = await client.call('installs.get', { digest });
        ctx.print(attempt, () => attemptText(attempt));
      }),
    );

  install
    .command('cancel')
    .description('cancel a running install: npm\'s whole process group is stopped')
    .argument('<digest>', 'plan digest')
    .action((digest: string) =>
      ctx.withClient(async (client) => {
        const result = await client.call('installs.cancel', { digest });
        ctx.print(result, () => (result.cancelled ? `cancelled ${clean(digest)}` : `nothing of ${clean(digest)} was running`));
      }),
    );

  install
    .command('discard')
    .description('remove an attempt that did not succeed (its directory and record) so the plan can be tried again')
    .argument('<digest>', 'plan digest')
    .action((digest: string) =>
      ctx.withClient(async (client) => {
        const { discarded } = await client.call('installs.discard', { digest });
        ctx.print(discarded, () => `discarded ${clean(discarded.package)}@${clean(discarded.version)} (${discarded.status}); removed ${showArg(discarded.directory)}`);
      }),
    );

  install
    .command('settings')
    .description('show or change install settings: where Node/npm are looked for, the registry, a CA bundle, the time limit')
    .option('--runtime-dir <dir...>', 'directories to look for node and npm in, in order (absolute)')
    .option('--registry <url>', 'the one registry installs may use')
    .option('--default-registry', 'use npm\'s own built-in default registry')
    .option('--ca-file <file>', 'CA bundle for npm (a TLS-intercepting proxy)')
    .option('--no-ca-file', 'no CA bundle')
    .option('--timeout-ms <ms>', 'time limit for one install', (v) => Number(v))
    .action((opts: { runtimeDir?: string[]; registry?: string; defaultRegistry?: boolean; caFile?: string | false; timeoutMs?: number }) =>
      ctx.withClient(async (client) => {
        const change = {
          ...(opts.runtimeDir !== undefined ? { runtimeDirs: opts.runtimeDir } : {}),
          ...(opts.registry !== undefined ? { registry: opts.registry } : opts.defaultRegistry === true ? { registry: null } : {}),
          ...(typeof opts.caFile === 'string' ? { caFile: opts.caFile } : opts.caFile === false ? { caFile: null } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        };
        const { settings } =
          Object.keys(change).length > 0 ? await client.call('installs.setSettings', change) : await client.call('installs.getSettings');
        ctx.print(settings, () =>
          [
            `runtime dirs: ${settings.runtimeDirs.map(showArg).join(', ')}`,
            `registry:     ${clean(settings.registry ?? '(npm\'s built-in default)')}`,
            `CA file:      ${settings.caFile !== null ? showArg(settings.caFile) : '(none)'}`,
            `time limit:   ${settings.timeoutMs} ms`,
          ].join('\n'),
        );
      }),
    );
}

/** Step N of M on one rewritten line (a terminal), or one line per step (a pipe). index 0 clears it. */
function progressBar(err: (text: string) => void, tty: boolean): (index: number, total: number, step: string) => void {
  let shown = false;
  return (index, total, step) => {
    if (index === 0) {
      if (shown && tty) process.stderr.write('\r\u001b[K');
      return;
    }
    const width = 24;
    const filled = Math.round((width * (index - 1)) / total);
    const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${index}/${total} ${clean(step.replace('_', ' '))}`;
    shown = true;
    if (tty) process.stderr.write(`\r\u001b[K${line}`);
    else err(line);
  };
}

function installedText(service: Service, attempt: Attempt, reused: boolean): string {
  return [
    `${reused ? 'already installed' : 'installed'} ${clean(attempt.package)}@${clean(attempt.version)} (${attempt.lockedPackages} packages verified)`,
    ...(attempt.installScripts.length > 0 ? [`install scripts declared, NOT run: ${clean(attempt.installScripts.join(', '))}`] : []),
    `registered ${clean(service.name)} (disabled): ${showArg(service.command)} ${service.args.map(showArg).join(' ')}`,
    `trust and start it with: wispctl mcp activate ${clean(service.name)}`,
  ].join('\n');
}

function attemptText(a: Attempt): string {
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
