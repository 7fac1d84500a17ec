import type { Command } from 'commander';
import { WispError } from '../../core/index.js';
import { parseNonNegative } from '../args.js';
import type { CliContext } from '../context.js';
import { keychainFirst, withSessionAdvice } from '../keychain.js';
import { readSecret } from '../prompt.js';
import { documentOutput } from '../output.js';
import { keyClearedText, keySavedText, settingsSavedText, settingsText } from '../render/model.js';

type SetOptions = { baseUrl?: string; model?: string; firstByteTimeoutMs?: number; idleTimeoutMs?: number; maxRetries?: number; deferToolsAbove?: number };

/** wispctl model show|set|set-key|clear-key: the model API. */
export function register(program: Command, ctx: CliContext): void {
  const model = program.command('model').description('the model API: settings and key');
  const show = model
    .command('show')
    .description('show the model settings and where the key comes from')
    .action(() =>
      ctx.withClient(async (client) => {
        const { settings } = await client.call('model.getSettings');
        ctx.print(settings, () => settingsText(settings));
      }),
    );
  documentOutput(show, { json: 'one object: the settings, and where the key comes from (never its value)', fields: ['baseUrl', 'model', 'firstByteTimeoutMs', 'idleTimeoutMs', 'maxRetries', 'deferToolsAbove', 'key'] });
  model
    .command('set')
    .description('change model settings')
    .option('--base-url <url>', 'API base URL (e.g. https://api.deepseek.com)')
    .option('--model <name>', 'model name (e.g. deepseek-chat)')
    .option('--first-byte-timeout-ms <ms>', 'deadline for the first byte (keep-alives count)', (v) => parseNonNegative(v, '--first-byte-timeout-ms'))
    .option('--idle-timeout-ms <ms>', 'deadline between chunks', (v) => parseNonNegative(v, '--idle-timeout-ms'))
    .option('--max-retries <n>', 'retries before the stream starts (0-5)', (v) => parseNonNegative(v, '--max-retries'))
    .option('--defer-tools-above <n>', 'above this many tools, offer search and execute instead (0-128)', (v) => parseNonNegative(v, '--defer-tools-above'))
    .action((opts: SetOptions) =>
      ctx.withClient(async (client) => {
        const { settings } = await client.call('model.setSettings', opts);
        ctx.print(settings, () => settingsSavedText(settings));
      }),
    );
  model
    .command('set-key')
    .description('save the API key; read without echo from the terminal, or from stdin (never from the command line)')
    .option('--session', 'keep it in memory only, for this daemon run (not in the keychain)')
    .action((opts: { session?: boolean }) =>
      ctx.withClient(async (client) => {
        await keychainFirst(client, opts.session === true, ['model', 'set-key']);
        const value = await readSecret('model API key (not shown): ', ctx.io.err);
        if (value === '') throw new WispError('INVALID_PARAMS', 'the key is empty: nothing was sent (to remove the key: wispctl model clear-key)');
        const { settings } = await withSessionAdvice(() => client.call('model.setKey', { value, storage: opts.session === true ? 'session' : 'keychain' }), ['model', 'set-key']);
        ctx.print(settings, () => keySavedText(settings));
      }),
    );
  model
    .command('clear-key')
    .description('remove the saved API key (this run\'s and the keychain\'s); the daemon\'s DEEPSEEK_API_KEY, if it has one, applies again')
    .action(() =>
      ctx.withClient(async (client) => {
        // The session key first: it hides a keychain key, which goes next (the keychain is touched only if it holds one).
        let { settings } = await client.call('model.setKey', { value: '', storage: 'session' });
        if (settings.key === 'keychain') ({ settings } = await client.call('model.setKey', { value: '', storage: 'keychain' }));
        ctx.print(settings, () => keyClearedText(settings));
      }),
    );
  model.addHelpText(
    'after',
    '\nThe key used, first match wins: one set with set-key --session (this daemon run only), one saved\nin the keychain with set-key, the daemon\'s DEEPSEEK_API_KEY. `model show` says which (key).',
  );
}
