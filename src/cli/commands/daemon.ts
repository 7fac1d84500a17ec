import { promises as fs } from 'node:fs';
import type { Command } from 'commander';
import { EXIT, WispError } from '../../core/index.js';
import type { CliContext, CliIo } from '../context.js';
import { documentOutput } from '../output.js';
import { startDaemon, statusOrNull, stopDaemon } from '../daemon-control.js';
import { commandFailedText, daemonStatusText, fileDone, installDryRunText, ranText, startedText, uninstallDryRunText } from '../render/daemon.js';
import { defaultPlanInputs, planUnit, runCommand, writeUnit } from '../service-manager.js';

/** wispctl daemon start|stop|status|install|uninstall. */
export function register(program: Command, ctx: CliContext): void {
  const daemon = program.command('daemon').description('start, stop and install the daemon');

  daemon
    .command('start')
    .description('start wispd in the background and wait until its socket answers')
    .action(async () => {
      const result = await startDaemon(ctx.paths(), ctx.daemonFlags());
      ctx.print(result, () => startedText(result));
    });

  daemon
    .command('stop')
    .description('ask wispd to shut down and wait until it has exited')
    .action(async () => {
      const result = await stopDaemon(ctx.paths().socket);
      ctx.print(result, () => (result.wasRunning ? `wispd stopped (pid ${String(result.pid)})` : 'wispd is not running'));
    });

  const status = daemon
    .command('status')
    .description('is wispd running, and is it installed as a user service?')
    .action(async () => {
      const p = ctx.paths();
      const status = await statusOrNull(p.socket);
      const plan = await planUnit(defaultPlanInputs([]));
      const installed = await fs.access(plan.file).then(() => true, () => false);
      const value = { running: status !== null, pid: status?.pid ?? null, socket: p.socket, serviceManager: plan.manager, unitFile: plan.file, installed };
      ctx.print(value, () => daemonStatusText(status, p.socket, plan, installed));
      if (status === null) process.exitCode = EXIT.noDaemon;
    });
  documentOutput(status, { json: 'one object (also with no daemon, then exit 3)', fields: ['running', 'pid', 'socket', 'serviceManager', 'unitFile', 'installed'] });

  registerServiceUnit(daemon, ctx);
}

/** install, uninstall: wispd as a launchd or systemd user service. */
function registerServiceUnit(daemon: Command, ctx: CliContext): void {
  daemon
    .command('install')
    .description('install wispd as a user service (launchd on macOS, systemd --user on Linux) and start it')
    .option('--dry-run', 'print the unit file and the commands without writing or running anything')
    .action(async (opts: { dryRun?: boolean }) => {
      const plan = await planUnit(defaultPlanInputs(ctx.daemonFlags()));
      if (opts.dryRun === true) {
        ctx.print({ ...plan, dryRun: true }, () => installDryRunText(plan));
        return;
      }
      for (const dir of await writeUnit(plan)) ctx.io.err(fileDone('made', dir));
      ctx.io.err(fileDone('wrote', plan.file));
      await runAll(plan.install, ctx.io);
    });

  daemon
    .command('uninstall')
    .description('stop and remove the user service')
    .option('--dry-run', 'print the commands and the file to remove without doing anything')
    .action(async (opts: { dryRun?: boolean }) => {
      const plan = await planUnit(defaultPlanInputs([]));
      if (opts.dryRun === true) {
        ctx.print({ file: plan.file, commands: plan.uninstall, dryRun: true }, () => uninstallDryRunText(plan));
        return;
      }
      await runAll(plan.uninstall.slice(0, 1), ctx.io);
      await fs.rm(plan.file, { force: true });
      ctx.io.err(fileDone('removed', plan.file));
      await runAll(plan.uninstall.slice(1), ctx.io);
    });
}

async function runAll(commands: readonly (readonly string[])[], io: CliIo): Promise<void> {
  for (const argv of commands) {
    const outcome = await runCommand(argv);
    io.err(ranText(argv, outcome));
    if (!outcome.ok) throw new WispError('INTERNAL_ERROR', commandFailedText(argv));
  }
}
