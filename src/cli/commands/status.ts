import type { Command } from 'commander';
import { WispError } from '../../core/index.js';
import type { CliContext } from '../context.js';
import { jsonForTerminal } from '../render.js';
import { documentOutput } from '../output.js';
import { statusText } from '../render/daemon.js';
import { statusWideText } from '../render/wide.js';

/** wispctl status: the running daemon at a glance. */
export function register(program: Command, ctx: CliContext): void {
  const status = program
    .command('status')
    .description('show the daemon: version, pid, uptime, paths, counts, services connected and their startup phase')
    .addHelpText('after', '\nWith --json: daemon.status\'s result; with no daemon, {"running": false, "socket": ..., "code": "DAEMON_NOT_RUNNING"} (exit 3).')
    .action(async () => {
      try {
        await ctx.withClient(async (client) => {
          const status = await client.call('daemon.status');
          ctx.print(status, () => statusText(status), () => statusWideText(status));
        });
      } catch (error) {
        // A script reading --json gets an answer on stdout either way; stderr and the exit status say the rest.
        if (ctx.json() && error instanceof WispError && error.code === 'DAEMON_NOT_RUNNING') {
          ctx.io.out(jsonForTerminal({ running: false, socket: ctx.paths().socket, code: error.code, message: error.message }, 2));
        }
        throw error;
      }
    });
  documentOutput(status, {
    json: 'one object: daemon.status\'s result',
    fields: ['version', 'protocolVersion', 'pid', 'runId', 'startedAt', 'uptimeMs', 'paths', 'counts', 'services', 'load', 'lastSeq', 'you', 'sourceProblems'],
    wide: 'adds the start time, node and protocol versions, every path, the active tools, the last event seq and your client id',
  });
}
