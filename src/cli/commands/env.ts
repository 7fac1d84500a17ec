import type { Command } from 'commander';
import { EXIT } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, nonEmpty, withSessionAdvice } from '../keychain.js';
import { confirm, readSecret } from '../prompt.js';
import { documentOutput } from '../output.js';
import { carryOverText, secretPrompt, serviceDone, variableSavedText, variablesText } from '../render/services.js';

/** wispctl mcp env ...: a service's environment variables, values kept in the keychain or memory. */
export function register(mcp: Command, ctx: CliContext): void {
  const env = mcp.command('env').description('a service\'s environment variables: values go to the OS keychain (or memory), never to files');

  env
    .command('set')
    .description('set one variable; the value is read without echo from the terminal, or from stdin (never from the command line)')
    .argument('<name>', 'service name (or id)')
    .argument('<var>', 'variable name (letters, digits, _; not starting with a digit)')
    .option('--session', 'keep the value in memory only, for this daemon run (not in the keychain)')
    .option('--plain', 'the value is no secret (a path, a setting): never redacted, so approvals show it as it is sent. Without: a secret, redacted wherever it appears')
    .action((name: string, variable: string, opts: { session?: boolean; plain?: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        const words = ['mcp', 'env', 'set', service.name, variable];
        await keychainFirst(client, opts.session === true, words);
        const value = nonEmpty(await readSecret(secretPrompt.variable(service, variable), ctx.io.err), `the value of ${variable}`);
        const setEnv = () =>
          client.call('services.setEnv', {
            id: service.id,
            mode: 'upsert',
            variables: [{ name: variable, value, storage: opts.session === true ? 'session' : 'keychain', ...(opts.plain === true ? { plain: true } : {}) }],
          });
        const result = await withSessionAdvice(setEnv, words);
        ctx.print(result.service.env, () => variableSavedText(result.service, variable, opts.session === true));
      }),
    );

  const list = env
    .command('list')
    .description('list the variable names and where each value is kept (values are never shown)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        ctx.print(
          service.env.map((v) => ({ name: v.name, storage: v.storage, plain: v.plain === true })),
          () => variablesText(service.env),
        );
      }),
    );
  documentOutput(list, { json: 'an array of variables (never their values); plain is true for a value that is no secret and is never redacted', fields: ['name', 'storage', 'plain'] });

  env
    .command('clear')
    .description('remove every variable of a service (keychain entries included)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        await client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [] });
        ctx.print([], () => serviceDone(service, 'variables cleared'));
      }),
    );

  env
    .command('carry-over')
    .description('after editing the command, args or cwd: let the saved values go to the new program')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'do not ask')
    .action((name: string, opts: { yes?: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        ctx.io.err(carryOverText(service));
        if (opts.yes !== true && !(await confirm('Carry the saved values over to this program? [y/N] ', 'not a terminal, so nobody can confirm: pass --yes'))) {
          ctx.io.err('nothing changed');
          process.exitCode = EXIT.refused;
          return;
        }
        const result = await client.call('services.carryOverEnv', { id: service.id, configVersion: service.configVersion });
        ctx.print(result.service, () => serviceDone(result.service, 'variables carried over'));
      }),
    );
}
