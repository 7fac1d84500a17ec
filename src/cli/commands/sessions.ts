import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { sessionDeletedText, sessionsTable, transcriptText } from '../render/sessions.js';

/** wispctl sessions list|show|delete: model sessions and their transcripts. */
export function register(program: Command, ctx: CliContext): void {
  const sessions = program.command('sessions').description('model sessions');
  sessions
    .command('list', { isDefault: true })
    .description('list sessions')
    .action(() =>
      ctx.withClient(async (client) => {
        const { sessions: list } = await client.call('sessions.list');
        ctx.print(list, () => sessionsTable(list));
      }),
    );
  sessions
    .command('show')
    .description('show a session\'s transcript')
    .argument('<id>', 'session id')
    .action((id: string) =>
      ctx.withClient(async (client) => {
        const result = await client.call('sessions.get', { id });
        ctx.print(result, () => transcriptText(result));
      }),
    );
  sessions
    .command('delete')
    .description('delete a session and its transcript')
    .argument('<id>', 'session id')
    .action((id: string) =>
      ctx.withClient(async (client) => {
        await client.call('sessions.delete', { id });
        ctx.print({ deleted: id }, () => sessionDeletedText(id));
      }),
    );
}
