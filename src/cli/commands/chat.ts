import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { EXIT, WispError, exitStatusFor } from '../../core/index.js';
import { chat, runTask } from '../chat.js';
import type { CliContext } from '../context.js';
import { sessionId } from '../ids.js';
import { stdinIsTerminal } from '../stdin.js';

/**
 * The key is looked up before anything is typed or sent: without one, every request would
 * fail, and the chat would say so only after the first line.
 */
async function requireKey(client: WispClient): Promise<void> {
  const { settings } = await client.call('model.getSettings');
  if (settings.key === 'none') {
    throw new WispError('MODEL_NO_KEY', 'no model API key: set one with `wispctl model set-key` (or `--session` for this daemon run only), or start the daemon with DEEPSEEK_API_KEY');
  }
}

/** --session ID or a unique prefix of it; a new session when none is given. */
async function sessionFor(client: WispClient, given: string | undefined, title: string): Promise<string> {
  return given !== undefined ? sessionId(client, given) : (await client.call('sessions.create', { title })).session.id;
}

/** wispctl send TEXT and wispctl chat: talking to the model. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description('send one request to the model and stream the answer; tool calls wait for approval (asked here on a terminal)')
    .argument('<text>', 'what to ask')
    .option('--session <id>', 'continue this session, by id or its first 4+ characters (default: a new one)')
    .option('--reasoning', 'also print the model\'s reasoning (to stderr)')
    .action((text: string, opts: { session?: string; reasoning?: boolean }) =>
      ctx.withClient(async (client) => {
        await requireKey(client);
        const id = await sessionFor(client, opts.session, text.slice(0, 60));
        const task = await runTask(client, id, text, { io: ctx.io, interactive: stdinIsTerminal(), reasoning: opts.reasoning === true, json: ctx.json() });
        if (task.state.status === 'failed') process.exitCode = exitStatusFor(task.state.code);
        else if (task.state.status !== 'completed') process.exitCode = EXIT.failure;
      }),
    );

  program
    .command('chat')
    .description('talk to the model: each line is a request; /help, /tools, /sessions, /quit; Ctrl-C cancels a running request')
    .option('--session <id>', 'continue this session, by id or its first 4+ characters (default: a new one)')
    .action((opts: { session?: string }) =>
      ctx.withClient(async (client) => {
        await requireKey(client);
        await chat(client, await sessionFor(client, opts.session, 'chat'), ctx.io);
      }),
    );
}
