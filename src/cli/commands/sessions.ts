import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { sessionId } from '../ids.js';
import { documentOutput } from '../output.js';
import { clean } from '../render.js';
import { sessionDeletedText, sessionsTable, sessionsWideTable, transcriptText } from '../render/sessions.js';
import { toolLabels } from '../tool-names.js';

/** wispctl sessions list|show|delete: model sessions and their transcripts. */
export function register(program: Command, ctx: CliContext): void {
  const sessions = program.command('sessions').description('model sessions');
  const list = sessions
    .command('list', { isDefault: true })
    .description('list sessions')
    .action(() =>
      ctx.withClient(async (client) => {
        const { sessions: all } = await client.call('sessions.list');
        ctx.print(all, () => sessionsTable(all), () => sessionsWideTable(all));
      }),
    );
  documentOutput(list, {
    json: 'an array of sessions, oldest first',
    fields: ['id', 'title', 'createdAt', 'updatedAt', 'messageCount', 'lastTask'],
    wide: 'adds TASK ID, ROUNDS and CREATED',
  });
  const show = sessions
    .command('show')
    .description('show a session\'s transcript; tool calls as service/tool')
    .argument('<id>', 'session id, or its first 4+ characters if no other session starts the same way')
    .action((given: string) =>
      ctx.withClient(async (client) => {
        const id = await sessionId(client, given);
        const result = await client.call('sessions.get', { id });
        // JSON keeps the model-facing names exactly as sent; only the text needs the lookup.
        const label = ctx.json() ? clean : await toolLabels(client, result.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name)));
        ctx.print(result, () => transcriptText(result, label), () => transcriptText(result, label, true));
      }),
    );
  documentOutput(show, {
    json: 'one object: the session, its newest messages exactly as sent to the model (model-facing tool names), its tasks',
    fields: ['session', 'messages', 'tasks', 'omittedMessages', 'omittedTasks'],
    wide: 'adds each call\'s model-facing name and id, and the model\'s reasoning',
  });
  sessions
    .command('delete')
    .description('delete a session and its transcript')
    .argument('<id>', 'session id, or its first 4+ characters if no other session starts the same way')
    .action((given: string) =>
      ctx.withClient(async (client) => {
        const id = await sessionId(client, given);
        await client.call('sessions.delete', { id });
        ctx.print({ deleted: id }, () => sessionDeletedText(id));
      }),
    );
}
