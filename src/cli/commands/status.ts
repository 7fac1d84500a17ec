import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { statusText } from '../render/daemon.js';

/** wispctl status: the running daemon at a glance. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description('show the daemon: version, pid, uptime, paths, counts')
    .action(() =>
      ctx.withClient(async (client) => {
        const status = await client.call('daemon.status');
        ctx.print(status, () => statusText(status));
      }),
    );
}
