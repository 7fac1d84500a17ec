import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { EXIT, WispError, exitStatusFor, type Result, type Service } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { confirm } from '../prompt.js';
import { fitToTerminal, stderrColumns } from '../render.js';
import { activationQuestion, activationText, failureTailText, stateLine } from '../render/services.js';
import { stdinIsTerminal } from '../stdin.js';

/**
 * Trusting a service: what will run is shown and asked about (unless --yes), then it is
 * activated bound to exactly the configuration shown. `mcp activate` and `mcp restart` share it.
 */
export async function activateWithQuestion(client: WispClient, ctx: CliContext, service: Service, yes: boolean, declined = 'not activated'): Promise<void> {
  if (!yes) {
    const plan = await sandboxPlan(client, service);
    // Lines too wide for the terminal are broken by us, never wrapped by it.
    ctx.io.err(fitToTerminal(activationText(service, plan), stderrColumns()));
    if (!(await confirm(activationQuestion(service), 'not a terminal, so nobody can confirm: pass --yes to trust this configuration'))) {
      ctx.io.err(declined);
      process.exitCode = EXIT.refused;
      return;
    }
  }
  const result = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const c = result.service.connection;
  ctx.print(result.service, () => stateLine(result.service));
  if (c.status !== 'failed') return;
  process.exitCode = exitStatusFor(c.code);
  const tail = await failureTailOf(client, result.service);
  if (tail !== undefined) ctx.io.err(tail);
}

/** A failed local service's last stderr lines and the command to follow its log; undefined for a remote one, one that wrote nothing, or when the daemon no longer has it. */
export async function failureTailOf(client: WispClient, service: Service): Promise<string | undefined> {
  if (service.transport !== 'stdio' || service.connection.status !== 'failed') return undefined;
  const logs = await client.call('services.logs', { id: service.id }).catch(() => undefined);
  return logs === undefined ? undefined : failureTailText(service, logs);
}

/** What a sandboxed launch will see, for the trust prompt; a command that cannot be found yet is said, not fatal (activation says it again). */
export async function sandboxPlan(client: WispClient, service: Service): Promise<Result<'services.sandboxPlan'> | { error: string } | undefined> {
  if (service.transport !== 'stdio' || service.sandbox.status !== 'on') return undefined;
  return client.call('services.sandboxPlan', { id: service.id }).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
}

/** wispctl mcp restart: disable, then activate with the usual trust question. */
export function registerRestart(mcp: Command, ctx: CliContext): void {
  mcp
    .command('restart')
    .description('stop a service (if it runs), then trust and activate it again: shows what will run and asks, as activate does')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'do not ask (for scripts); you still trust exactly the configuration shown')
    .addHelpText('after', '\nDeclined or interrupted at the question, the service stays disabled. With --json the service as activated is printed on stdout.')
    .action((name: string, opts: { yes?: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        // Nobody could answer the question: say so before anything is stopped.
        if (opts.yes !== true && !stdinIsTerminal()) throw new WispError('INVALID_PARAMS', 'not a terminal, so nobody can confirm: pass --yes to trust this configuration (nothing was stopped)');
        const stopped = service.connection.status === 'disabled' ? service : (await client.call('services.disable', { id: service.id })).service;
        if (stopped !== service) ctx.io.err(stateLine(stopped));
        await activateWithQuestion(client, ctx, stopped, opts.yes === true, `not activated: ${stopped.name} stays disabled`);
      }),
    );
}
