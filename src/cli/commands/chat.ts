import type { Command } from 'commander';
import { EXIT, exitStatusFor } from '../../core/index.js';
import { chat, runTask } from '../chat.js';
import type { CliContext } from '../context.js';

/** wispctl send TEXT and wispctl chat: talking to the model. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description('send one request to the model and stream the answer; tool calls wait for approval (asked here on a terminal)')
    .argument('<text>', 'what to ask')
    .option('--session <id>', 'continue this session (default: a new one)')
    .option('--reasoning', 'also print the model\'s reasoning (to stderr)')
    .action((text: string, opts: { session?: string; reasoning?: boolean }) =>
      ctx.withClient(async (client) => {
        const sessionId = opts.session ?? (await client.call('sessions.create', { title: text.slice(0, 60) })).session.id;
        const task = await runTask(client, sessionId, text, { io: ctx.io, interactive: process.stdin.isTTY, reasoning: opts.reasoning === true, json: ctx.json() });
        if (task.state.status === 'failed') process.exitCode = exitStatusFor(task.state.code);
        else if (task.state.status !== 'completed') process.exitCode = EXIT.failure;
      }),
    );

  program
    .command('chat')
    .description('talk to the model: each line is a request; /tools, /sessions, /quit; Ctrl-C cancels a running request')
    .option('--session <id>', 'continue this session (default: a new one)')
    .action((opts: { session?: string }) => ctx.withClient((client) => chat(client, opts.session, ctx.io)));
}
