import type { Command } from 'commander';
import { connectClient } from '../connect.js';
import type { WispEvent } from '../../core/index.js';
import { parseNonNegative } from '../args.js';
import type { CliContext } from '../context.js';
import { EXIT_INTERRUPTED } from '../prompt.js';
import { documentOutput } from '../output.js';
import { jsonForTerminal } from '../render.js';
import { describeEvent } from '../render/events.js';

/** wispctl events [--follow]: the daemon's event stream. */
export function register(program: Command, ctx: CliContext): void {
  const events = program
    .command('events')
    .description('print the events the daemon still holds; with --follow, keep printing new ones')
    .option('-f, --follow', 'keep following until interrupted or the daemon stops')
    .option('--since <seq>', 'only events after this seq', (v) => parseNonNegative(v, '--since'))
    .action(async (opts: { follow?: boolean; since?: number }) => {
      const client = await connectClient(ctx.paths().socket);
      const printEvent = (event: WispEvent): void => ctx.io.out(ctx.json() ? jsonForTerminal(event) : describeEvent(event));
      client.onEvent(printEvent);
      const ended = new Promise<void>((resolve) => client.onClose(() => resolve()));
      const interrupted = new AbortController();
      const stop = (): void => {
        interrupted.abort();
        void client.close();
      };
      // Before the first event is printed: a Ctrl-C that comes with it still ends with 130.
      if (opts.follow === true) process.once('SIGINT', stop);
      try {
        await client.call('events.subscribe', { since: opts.since ?? 0 });
      } catch (error) {
        // Refused (a since past the newest event, say): nothing to follow, and the open connection must not keep wispctl running.
        process.off('SIGINT', stop);
        await client.close();
        throw error;
      }
      if (opts.follow !== true) {
        // Replayed events were written right after the answer; a status round trip flushes them.
        await client.call('daemon.status');
        await client.close();
        return;
      }
      await ended;
      process.off('SIGINT', stop);
      // Ctrl-C ends a follow as it ends any command; the daemon stopping is a normal end.
      if (interrupted.signal.aborted) process.exitCode = EXIT_INTERRUPTED;
    });
  documentOutput(events, { json: 'every event', lines: true, fields: ['seq', 'at', 'type'], wide: 'the same as the default (one line per event)' });
}
