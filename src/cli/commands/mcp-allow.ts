import type { Command } from 'commander';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { showArg } from '../render.js';
import { describeService } from '../render/services.js';

/**
 * wispctl mcp allow NAME HOST[:PORT] [--revoke]: a network grant for a sandboxed service.
 * For one whose network is host grants or `ask`, a live grant its egress proxy applies to
 * the next connection (no restart); for one with no network, a profile change (an edit).
 * The daemon checks HOST (INVALID_PARAMS, field host).
 */
export function registerAllow(mcp: Command, ctx: CliContext): void {
  mcp
    .command('allow')
    .description('let a sandboxed service reach a host through its egress proxy, at once and without a restart (--revoke takes it back); a service with no network gets it as a sandbox change instead, and must be trusted again (Linux only)')
    .argument('<name>', 'service name (or id)')
    .argument('<host[:port]>', 'host, host:port, [v6]:port, *.domain[:port] or an IP address; without a port, 443 and 80')
    .option('--revoke', 'take back a grant given with mcp allow (new connections are refused; open ones run to their end)')
    .action((name: string, host: string, opts: { revoke?: boolean }) =>
      ctx.withClient(async (client) => {
        const result = await client.call('services.allowNet', { ...ref(name), host, ...(opts.revoke === true ? { revoke: true } : {}) });
        const { service, grant, change } = result;
        const who = showArg(service.name);
        const what = showArg(grant);
        const line =
          change === 'unchanged'
            ? `${who} may reach ${what} already`
            : change === 'profile'
              ? `${who} had no network: its sandbox now grants ${what} (a sandbox change: it is disabled, configVersion ${service.configVersion}; trust it again with wispctl mcp activate ${who})`
              : opts.revoke === true
                ? `revoked: ${who} may no longer reach ${what} (its next connection there is refused; one open now runs to its end)`
                : `allowed: ${who} may reach ${what} (a live grant: its egress proxy lets the next connection through, no restart)`;
        ctx.print(result, () => `${line}\n${describeService(service)}`);
      }),
    );
}
