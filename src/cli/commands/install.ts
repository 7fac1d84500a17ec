import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { EXIT, WispError } from '../../core/index.js';
import { parsePackageSpec } from '../args.js';
import { installDigest } from '../ids.js';
import { documentOutput } from '../output.js';
import { attemptsWideTable } from '../render/wide.js';
import type { CliContext } from '../context.js';
import { Interruption, answerApproval } from '../prompt.js';
import { fitToTerminal, stderrColumns } from '../render.js';
import { attemptText, attemptsTable, cancelledText, discardedText, installQuestion, installSettingsText, installedText, planText, problemLines, progressBar } from '../render/installs.js';
import { stdinIsTerminal } from '../stdin.js';

const INSTALL_EXAMPLES = `
Examples:
  wispctl install run @modelcontextprotocol/server-everything@2026.8.31 --bin mcp-server-everything
  wispctl install PKG@1.2.3 --bin NAME --yes -- ARGS...   ("run" may be left out; launch arguments after --)
  wispctl install settings --runtime-dir /opt/node22/bin    (a directory with node 22.22+ and npm 12)
  wispctl install settings --ca-file /etc/ssl/proxy-ca.pem  (behind a TLS-intercepting proxy)`;

const DIGEST_ARG = 'plan digest (wispctl install list), or its first 4+ characters if no other attempt starts the same way';

const ATTEMPT_FIELDS = ['digest', 'package', 'version', 'status', 'step', 'registry', 'directory', 'bin', 'args', 'startedAt', 'endedAt', 'serviceId', 'serviceName', 'error'];

type SettingsOptions = { runtimeDir?: string[]; registry?: string; defaultRegistry?: boolean; caFile?: string | false; timeoutMs?: number; sandbox?: boolean };

/** wispctl install PKG@VERSION --bin NAME [-- ARGS], and install list|show|cancel|discard|settings. */
export function register(program: Command, ctx: CliContext): void {
  const install = program
    .command('install')
    .usage('[run] <package@version> --bin <name> [--yes] [-- args...]\n       wispctl install list|show|cancel|discard|settings')
    .description('install an MCP server from the npm registry (exact version, verified, no install scripts) and register it disabled')
    .addHelpText('after', INSTALL_EXAMPLES);

  // Listed first: installing is what most readers of `install --help` came for ("run" may be left out).
  install
    .command('run', { isDefault: true })
    .description('install PKG@VERSION: show the plan, ask, install with a progress bar, print the registered service')
    .argument('<spec>', 'package@exact-version, e.g. @modelcontextprotocol/server-everything@2026.8.31')
    .argument('[args...]', 'launch arguments for the server (after --)')
    .requiredOption('--bin <name>', 'the package\'s JavaScript bin to run')
    .option('-y, --yes', 'do not ask (for scripts); the plan shown is what gets approved')
    .action((spec: string, args: string[], opts: { bin: string; yes?: boolean }) => ctx.withClient((client) => runInstall(client, ctx, spec, args, opts)));

  registerAttempts(install, ctx);

  const settings = install
    .command('settings')
    .description('show or change install settings: where Node/npm are looked for, the registry, a CA bundle, the time limit, the sandbox')
    .option('--runtime-dir <dir...>', 'directories to look for node and npm in, in order (absolute)')
    .option('--registry <url>', 'the one registry installs may use')
    .option('--default-registry', 'use npm\'s own built-in default registry')
    .option('--ca-file <file>', 'CA bundle for npm (a TLS-intercepting proxy)')
    .option('--no-ca-file', 'no CA bundle')
    .option('--timeout-ms <ms>', 'time limit for one install', (v) => Number(v))
    .option('--sandbox', 'run npm sandboxed (the default): the install directory, npm\'s own cache and config, and the registry\'s host only')
    .option('--no-sandbox', 'run npm unsandboxed, as you: it can read your files and reach any host (for machines without bubblewrap)')
    .action((opts: SettingsOptions) =>
      ctx.withClient(async (client) => {
        const change = {
          ...(opts.runtimeDir !== undefined ? { runtimeDirs: opts.runtimeDir } : {}),
          ...(opts.registry !== undefined ? { registry: opts.registry } : opts.defaultRegistry === true ? { registry: null } : {}),
          ...(typeof opts.caFile === 'string' ? { caFile: opts.caFile } : opts.caFile === false ? { caFile: null } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
          ...(opts.sandbox !== undefined ? { sandbox: opts.sandbox } : {}),
        };
        const { settings } =
          Object.keys(change).length > 0 ? await client.call('installs.setSettings', change) : await client.call('installs.getSettings');
        ctx.print(settings, () => installSettingsText(settings));
      }),
    );
  documentOutput(settings, { json: 'one object: the settings (after the change)', fields: ['runtimeDirs', 'registry', 'caFile', 'timeoutMs', 'sandbox'] });
}

/** list, show, cancel, discard. */
function registerAttempts(install: Command, ctx: CliContext): void {
  const list = install
    .command('list')
    .description('every install attempt, newest first')
    .action(() =>
      ctx.withClient(async (client) => {
        const { attempts } = await client.call('installs.list');
        ctx.print(attempts, () => attemptsTable(attempts), () => attemptsWideTable(attempts));
      }),
    );
  documentOutput(list, { json: 'an array of attempts, newest first', fields: ATTEMPT_FIELDS, wide: 'adds SERVICE ID, ENDED, REGISTRY and DIRECTORY' });

  const show = install
    .command('show')
    .description('one attempt: its steps, outcome, packages with install scripts (never run) and npm\'s log tail')
    .argument('<digest>', DIGEST_ARG)
    .action((given: string) =>
      ctx.withClient(async (client) => {
        const digest = await installDigest(client, given);
        const { attempt } = await client.call('installs.get', { digest });
        ctx.print(attempt, () => attemptText(attempt));
      }),
    );
  documentOutput(show, { json: 'one attempt, with npm\'s log tail', fields: [...ATTEMPT_FIELDS, 'logTail'] });

  install
    .command('cancel')
    .description('cancel a running install: npm\'s whole process group is stopped')
    .argument('<digest>', DIGEST_ARG)
    .action((given: string) =>
      ctx.withClient(async (client) => {
        const digest = await installDigest(client, given);
        const result = await client.call('installs.cancel', { digest });
        ctx.print(result, () => cancelledText(result.cancelled, digest));
      }),
    );

  install
    .command('discard')
    .description('remove an attempt that did not succeed (its directory and record) so the plan can be tried again')
    .argument('<digest>', DIGEST_ARG)
    .action((given: string) =>
      ctx.withClient(async (client) => {
        const digest = await installDigest(client, given);
        const { discarded } = await client.call('installs.discard', { digest });
        ctx.print(discarded, () => discardedText(discarded));
      }),
    );
}

/**
 * Shows the daemon's plan, answers its approval (--yes, a y/N question on a terminal, or
 * any client elsewhere), then installs with a progress bar. Ctrl-C at the question denies it.
 */
async function runInstall(client: WispClient, ctx: CliContext, spec: string, args: string[], opts: { bin: string; yes?: boolean }): Promise<void> {
  const { plan } = await client.call('installs.plan', { ...parsePackageSpec(spec), bin: opts.bin, args });
  ctx.io.err(fitToTerminal(planText(plan), stderrColumns()));
  const me = (await client.call('daemon.status')).you.clientId;
  const mode = opts.yes === true ? 'approve' : stdinIsTerminal() && !ctx.json() ? 'ask' : 'wait';
  const bar = progressBar(ctx.io.err, process.stderr.isTTY && !ctx.json());
  const interruption = new Interruption();
  client.onEvent((event) => {
    // Only the approval bound to the plan shown above is answered here.
    if (event.type === 'approval.requested' && event.approval.requester.clientId === me && event.approval.kind === 'install' && event.approval.binding.planDigest === plan.digest) {
      answerApproval(event.approval, { client, err: ctx.io.err, mode, interruption, question: installQuestion(plan) });
    } else if (event.type === 'install.progress' && event.install.digest === plan.digest && event.status === 'started' && event.pid === null) {
      bar.step(event.index, event.total, event.step);
    }
  });
  await client.call('events.subscribe', {});
  try {
    const result = await interruption.guard(client.call('installs.start', { planDigest: plan.digest }));
    bar.end(true);
    ctx.print(result, () => installedText(result.service, result.attempt, result.reused));
  } catch (error) {
    bar.end(false);
    if (error instanceof WispError && error.code === 'APPROVAL_DENIED') {
      ctx.io.err('not installed');
      process.exitCode = EXIT.refused;
      return;
    }
    if (error instanceof WispError && Array.isArray(error.details.problems)) {
      for (const line of problemLines(error.details.problems as { path: unknown; problem: unknown }[])) ctx.io.err(line);
    }
    throw error;
  }
}
