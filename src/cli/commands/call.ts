import type { Command } from 'commander';
import { EXIT, WispError } from '../../core/index.js';
import { parseJson } from '../args.js';
import type { CliContext } from '../context.js';
import { errorLines, jsonForTerminal } from '../render.js';

/** wispctl call METHOD [PARAMS]: one raw request, for scripts. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('call')
    .description('send one raw request to the daemon and print the result (for scripts)')
    .argument('<method>', 'method name, e.g. daemon.status (rpc.discover lists them all)')
    .argument('[params]', 'params as a JSON object', '{}')
    .addHelpText('after', '\nAn unknown method is a usage error here (exit 2, METHOD_NOT_FOUND): the method is what was typed.')
    .action((method: string, params: string) =>
      ctx.withClient(async (client) => {
        const parsed = parseJson(params, 'params');
        try {
          const result = await (client.call as (m: string, p: unknown) => Promise<unknown>)(method, parsed);
          ctx.io.out(jsonForTerminal(result, 2));
        } catch (error) {
          // METHOD_NOT_FOUND's own exit status is 1 (a client asked for a method this daemon
          // lacks); from this command it is the argument typed, so a usage error, with the daemon's message.
          if (!(error instanceof WispError) || error.code !== 'METHOD_NOT_FOUND') throw error;
          for (const line of errorLines(error)) ctx.io.err(line);
          process.exitCode = EXIT.usage;
        }
      }),
    );
}
