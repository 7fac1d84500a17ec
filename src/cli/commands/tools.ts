import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { WispError, exitStatusFor } from '../../core/index.js';
import { parseJson, ref } from '../args.js';
import type { CliContext } from '../context.js';
import { allTools } from '../pages.js';
import { Interruption, answerApproval } from '../prompt.js';
import { clean, describeApproval, fitToTerminal, stderrColumns } from '../render.js';
import { documentOutput } from '../output.js';
import { toolsWideTable } from '../render/wide.js';
import { logsText, toolFailureText, toolResultText, toolsTable } from '../render/services.js';

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
    .description('print the tail of what a service wrote to stderr (held in memory only)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
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
    .argument('[arguments]', 'arguments as a JSON object', '{}')
    .addHelpText('after', '\nWith --json the result is printed as JSON on stdout; on a terminal the approval is still asked, on stderr.')
    .action((name: string, toolName: string, argsText: string) => ctx.withClient((client) => callTool(client, ctx, name, toolName, argsText)));
}

/**
 * One tool call: its approval is shown and asked here on a terminal (elsewhere any client
 * may answer); Ctrl-C at the question denies it and ends the command.
 */
async function callTool(client: WispClient, ctx: CliContext, name: string, toolName: string, argsText: string): Promise<void> {
  const args = parseJson(argsText, 'arguments');
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new WispError('INVALID_PARAMS', 'arguments must be a JSON object');
  const { service } = await client.call('services.get', ref(name));
  const me = (await client.call('daemon.status')).you.clientId;
  // With --json too: the question goes to stderr, only the result to stdout.
  const mode = process.stdin.isTTY ? 'ask' : 'wait';
  const interruption = new Interruption();
  client.onEvent((event) => {
    if (event.type !== 'approval.requested' || event.approval.requester.clientId !== me) return;
    ctx.io.err(fitToTerminal(describeApproval(event.approval), stderrColumns()));
    answerApproval(event.approval, { client, err: ctx.io.err, mode, interruption });
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
