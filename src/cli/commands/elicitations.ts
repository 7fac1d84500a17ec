import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { WispError, type Elicitation } from '../../core/index.js';
import { parseJson } from '../args.js';
import type { CliContext } from '../context.js';
import { answerOnTerminal, formSchema, keyValueContent } from '../elicitation-form.js';
import { elicitationId } from '../ids.js';
import { documentOutput } from '../output.js';
import { Prompter } from '../prompt.js';
import { elicitationDone, elicitationsTable } from '../render/elicitations.js';
import { stdinIsTerminal } from '../stdin.js';

const ANSWER_HELP = `
Without an answer given, on a terminal: the request is shown (the server's text marked as
such) and answered there: a form field by field, each typed by the schema the server sent
(an empty line skips an optional field, whose default then applies); a URL is shown in full
with its host, never opened: you open it yourself, then say whether you completed it (yes
accepts, no declines). Ctrl-C leaves the request pending. Values are checked against the
server's schema before anything is sent: one that does not fit is refused
(ELICITATION_INVALID) and nothing goes to the server.

Examples:
  wispctl elicitation answer 3f2a name=Ada age=36
  wispctl elicitation answer 3f2a --content '{"name":"Ada","plan":"pro"}'
  wispctl elicitation answer 3f2a --accept      (a URL you completed; a form with its defaults)
  wispctl elicitation answer 3f2a --decline`;

interface AnswerOptions {
  content?: string;
  accept?: boolean;
  decline?: boolean;
  cancel?: boolean;
}

/** wispctl elicitations, elicitation answer ID: servers asking the user for input. */
export function register(program: Command, ctx: CliContext): void {
  const list = program
    .command('elicitations')
    .description('list the open elicitations: servers asking you for input (answer with wispctl elicitation answer ID)')
    .action(() =>
      ctx.withClient(async (client) => {
        const { elicitations } = await client.call('elicitations.list');
        ctx.print(elicitations, () => elicitationsTable(elicitations));
      }),
    );
  documentOutput(list, {
    json: 'an array of pending elicitations, oldest first',
    fields: ['id', 'service', 'mode', 'message', 'requestedSchema', 'url', 'host', 'owners', 'status', 'createdAt'],
  });

  const elicitation = program.command('elicitation').description('answer a server\'s request for input (see wispctl elicitations)');
  elicitation
    .command('answer')
    .description('answer an elicitation: accept (with the form\'s values), decline or cancel; the first answer from any client wins')
    .argument('<id>', 'elicitation id, or its first 4+ characters if no other open one starts the same way')
    .argument('[values...]', 'key=value pairs for the form, each typed by its schema')
    .option('--content <json>', 'the form\'s values as one JSON object (--json is the output format)')
    .option('--accept', 'accept without values: a URL you completed, or a form with its defaults')
    .option('--decline', 'decline: the server hears you said no')
    .option('--cancel', 'cancel: the server hears you dismissed it')
    .addHelpText('after', ANSWER_HELP)
    .action((given: string, words: string[], opts: AnswerOptions) => ctx.withClient((client) => answer(client, ctx, given, words, opts)));
}

async function answer(client: WispClient, ctx: CliContext, given: string, words: readonly string[], opts: AnswerOptions): Promise<void> {
  const chosen = [opts.decline === true, opts.cancel === true, opts.accept === true, opts.content !== undefined || words.length > 0].filter(Boolean).length;
  if (chosen > 1) throw new WispError('INVALID_PARAMS', 'give one answer: values (key=value or --content), --accept, --decline or --cancel');
  const id = await elicitationId(client, given);
  let done: Elicitation;
  if (opts.decline === true || opts.cancel === true) {
    done = (await client.call('elicitations.respond', { id, action: opts.decline === true ? 'decline' : 'cancel' })).elicitation;
  } else if (chosen === 1) {
    done = (await client.call('elicitations.respond', { id, action: 'accept', ...(await givenContent(client, id, words, opts)) })).elicitation;
  } else {
    done = await askHere(client, ctx, id);
  }
  ctx.print(done, () => elicitationDone(done));
}

/** The content given on the command line (none with --accept), typed by the form's schema. */
async function givenContent(client: WispClient, id: string, words: readonly string[], opts: AnswerOptions): Promise<{ content?: Record<string, unknown> }> {
  if (opts.accept === true) return {};
  const pending = await open(client, id);
  if (pending.mode === 'url') throw new WispError('ELICITATION_INVALID', 'a URL request takes no values: --accept once you completed it, or --decline');
  if (opts.content !== undefined) {
    const parsed = parseJson(opts.content, '--content');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new WispError('ELICITATION_INVALID', '--content must be one JSON object');
    return { content: parsed as Record<string, unknown> };
  }
  return { content: keyValueContent(formSchema(pending), words) };
}

async function open(client: WispClient, id: string): Promise<Elicitation> {
  const found = (await client.call('elicitations.list')).elicitations.find((e) => e.id === id);
  if (found !== undefined) return found;
  throw new WispError('ELICITATION_NOT_FOUND', `no open elicitation ${id}: answered already, ended with its call, or never asked (wispctl elicitations lists the open ones)`);
}

/** Shown and asked on the terminal; withdrawn if answered elsewhere meanwhile. */
async function askHere(client: WispClient, ctx: CliContext, id: string): Promise<Elicitation> {
  if (!stdinIsTerminal()) {
    throw new WispError('INVALID_PARAMS', 'no terminal to ask on: give the values (key=value or --content), --accept, --decline or --cancel');
  }
  const withdrawn = new AbortController();
  client.onEvent((event) => {
    if (event.type !== 'elicitation.resolved' || event.elicitation.id !== id || withdrawn.signal.aborted) return;
    withdrawn.abort(new WispError('ELICITATION_NOT_PENDING', `${elicitationDone(event.elicitation)} (elsewhere, while asked here)`, { status: event.elicitation.status }));
  });
  await client.call('events.subscribe', { types: ['elicitation.resolved'] });
  const pending = await open(client, id);
  const prompter = new Prompter();
  try {
    return await answerOnTerminal(client, prompter, pending, ctx.io.err, withdrawn.signal);
  } finally {
    prompter.close();
  }
}
