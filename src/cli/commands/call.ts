import type { Command } from 'commander';
import { parseJson } from '../args.js';
import type { CliContext } from '../context.js';
import { jsonForTerminal } from '../render.js';

/** wispctl call METHOD [PARAMS]: one raw request, for scripts. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('call')
    .description('send one raw request to the daemon and print the result (for scripts)')
    .argument('<method>', 'method name, e.g. daemon.status (rpc.discover lists them all)')
    .argument('[params]', 'params as a JSON object', '{}')
    .action((method: string, params: string) =>
      ctx.withClient(async (client) => {
        const parsed = parseJson(params, 'params');
        const result = await (client.call as (m: string, p: unknown) => Promise<unknown>)(method, parsed);
        ctx.io.out(jsonForTerminal(result, 2));
      }),
    );
}
