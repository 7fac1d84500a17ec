import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { WispError, exitStatusFor, type Service } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { answerOwnElicitation } from '../elicitation-form.js';
import { allTools } from '../pages.js';
import { Interruption, answerApproval } from '../prompt.js';
import { clean, describeApproval, fitToTerminal, stderrColumns } from '../render.js';
import { documentOutput } from '../output.js';
import { toolsWideTable } from '../render/wide.js';
import { logsText, toolFailureText, toolResultText, toolsTable } from '../render/services.js';
import { registerDescribe } from './mcp-describe.js';
import { followLogs } from './mcp-logs.js';
import { isJsonForm, jsonArguments, keyValueArguments, toolNotFoundMessage } from './mcp-tool-args.js';
import { stdinIsTerminal } from '../stdin.js';

/** wispctl mcp tools|logs|call: what an active service offers, says, and does. */
export function register(mcp: Command, ctx: CliContext): void {
  const list = mcp
    .command('tools')
    .description('list active tools (of one service, or all)')
    .argument('[name]', 'service name (or id)')
    .action((name: string | undefined) =>
      ctx.withClient(async (client) => {
        const serviceId = name === undefined ? undefined : (await client.call('services.get', ref(name))).service.id;
        const tools = await allTools(client, serviceId);
        ctx.print(tools, () => toolsTable(tools), () => toolsWideTable(tools));
      }),
    );
  documentOutput(list, {
    json: 'an array of tools (every page of tools.list)',
    fields: ['serviceId', 'serviceName', 'name', 'modelName', 'title', 'description', 'inputSchema', 'annotations'],
    wide: 'adds SERVICE ID, TITLE, ARGUMENTS (the input schema\'s, * required) and a longer DESCRIPTION',
  });

  const logs = mcp
    .command('logs')
    .description('print the tail of what a service wrote to stderr (held in memory only); -f keeps printing what it writes')
    .argument('<name>', 'service name (or id)')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C (or the daemon stops); a restart of the service starts its tail again')
    .addHelpText('after', '\nWith --json (without -f) the tail is printed as JSON: {stderr, droppedChars}.')
    .action((name: string, opts: { follow?: boolean }) =>
      ctx.withClient(async (client) => {
        if (opts.follow === true) {
          await followLogs(client, ctx, (await client.call('services.get', ref(name))).service);
          return;
        }
        const logs = await client.call('services.logs', ref(name));
        ctx.print(logs, () => logsText(logs));
      }),
    );
  documentOutput(logs, { json: 'one object: the stderr tail held in memory', fields: ['stderr', 'droppedChars'] });

  mcp
    .command('call')
    .description('call a tool: waits for an approval (answered here on a terminal, or by any client with wispctl approve)')
    .argument('<name>', 'service name (or id)')
    .argument('<tool>', 'the tool\'s own name (see wispctl mcp tools)')
    .argument('[arguments...]', 'key=value pairs, each value typed by the tool\'s input schema; or one JSON object')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  wispctl mcp call files read_file path=/home/me/notes.txt',
        '  wispctl mcp call everything add a=2 b=3              (a and b are numbers in its schema)',
        '  wispctl mcp call files search \'paths=["a","b"]\' recursive=true',
        '  wispctl mcp call files search \'{"paths":["a","b"],"recursive":true}\'',
        '',
        'key=value: strings are taken as they are; numbers, integers, booleans and null are parsed;',
        'arrays and objects are given as JSON. A key the schema does not name is refused before any',
        'approval is asked for (wispctl mcp describe NAME TOOL shows the arguments).',
        'With --json the result is printed as JSON on stdout; on a terminal the approval is still asked, on stderr.',
      ].join('\n'),
    )
    .action((name: string, toolName: string, words: string[]) => ctx.withClient((client) => callTool(client, ctx, name, toolName, words)));

  registerDescribe(mcp, ctx);
}

/** The call's arguments: one JSON object as given, or key=value words typed by the tool's schema. */
async function callArguments(client: WispClient, service: Service, toolName: string, words: readonly string[]): Promise<Record<string, unknown>> {
  if (isJsonForm(words)) return jsonArguments(words[0] ?? '{}');
  if (words.length === 0) return {};
  const tool = (await allTools(client, service.id)).find((t) => t.name === toolName);
  if (tool === undefined) throw new WispError('TOOL_NOT_FOUND', toolNotFoundMessage(service, toolName), { toolName });
  return keyValueArguments(tool, words);
}

/**
 * One tool call: its approval is shown and asked here on a terminal (elsewhere any client
 * may answer); Ctrl-C at the question denies it and ends the command.
 */
async function callTool(client: WispClient, ctx: CliContext, name: string, toolName: string, words: readonly string[]): Promise<void> {
  const { service } = await client.call('services.get', ref(name));
  const args = await callArguments(client, service, toolName, words);
  const me = (await client.call('daemon.status')).you.clientId;
  // With --json too: the question goes to stderr, only the result to stdout.
  const mode = stdinIsTerminal() ? 'ask' : 'wait';
  const interruption = new Interruption();
  client.onEvent((event) => {
    if (event.type !== 'approval.requested' || event.approval.requester.clientId !== me) return;
    ctx.io.err(fitToTerminal(describeApproval(event.approval), stderrColumns()));
    answerApproval(event.approval, { client, err: ctx.io.err, mode, interruption });
  });
  // A server asking for input while this call runs (elicitation): asked here too. Being
  // subscribed to elicitation.requested is what lets the daemon declare the capability.
  client.onEvent((event) => {
    if (event.type !== 'elicitation.requested' || !event.elicitation.owners.some((o) => o.clientId === me)) return;
    answerOwnElicitation(client, event.elicitation, { ask: mode === 'ask', err: ctx.io.err, interrupt: (cleanup) => interruption.interrupt(cleanup) });
  });
  await client.call('events.subscribe', {});
  try {
    const result = await interruption.guard(client.call('tools.call', { serviceId: service.id, toolName, arguments: args }));
    ctx.print(result, () => toolResultText(result));
  } catch (error) {
    // A result with isError: the server's whole message once, then ours without repeating it
    // (a JSON-RPC error has no result, and its message is the error's own).
    if (!(error instanceof WispError) || error.code !== 'TOOL_ERROR' || typeof (error.details.result as { text?: unknown } | undefined)?.text !== 'string') throw error;
    ctx.io.err(toolFailureText(error.details.result));
    ctx.io.err(`wispctl: ${clean(name)}/${clean(toolName)} reported an error (TOOL_ERROR)`);
    process.exitCode = exitStatusFor('TOOL_ERROR');
  }
}
