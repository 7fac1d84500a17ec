import type { Command } from 'commander';
import { WispError, type ToolInfo } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { allTools } from '../pages.js';
import { clean, cleanBlock, jsonForTerminal, oneLine, showArg, table } from '../render.js';
import { toolNotFoundMessage, typesOf } from './mcp-tool-args.js';

/** wispctl mcp describe NAME TOOL: one tool, its arguments and its input schema. */
export function registerDescribe(mcp: Command, ctx: CliContext): void {
  mcp
    .command('describe')
    .description('show one active tool: its description, its arguments and its whole input schema (all from the server: untrusted, shown escaped)')
    .argument('<name>', 'service name (or id)')
    .argument('<tool>', 'the tool\'s own name (see wispctl mcp tools NAME)')
    .addHelpText('after', '\nWith --json the tool is printed as JSON on stdout (as in tools.list).')
    .action((name: string, toolName: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        const tool = (await allTools(client, service.id)).find((t) => t.name === toolName);
        if (tool === undefined) throw new WispError('TOOL_NOT_FOUND', toolNotFoundMessage(service, toolName), { toolName });
        ctx.print(tool, () => describeTool(tool));
      }),
    );
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A property's type as read in a table: `string`, `integer|null`, `array of string`, or `-` when the schema gives none. */
function typeText(schema: unknown): string {
  const types = [...typesOf(schema)];
  if (types.length === 0) return '-';
  const items = isSchema(schema) ? typesOf(schema.items) : new Set<string>();
  return types.map((t) => (t === 'array' && items.size > 0 ? `array of ${[...items].join('|')}` : t)).join('|');
}

export function describeTool(tool: ToolInfo): string {
  const input: Schema = tool.inputSchema;
  const properties = isSchema(input.properties) ? input.properties : {};
  const required = new Set(Array.isArray(input.required) ? input.required.filter((r): r is string => typeof r === 'string') : []);
  const hints = Object.entries(tool.annotations ?? {})
    .filter(([k, v]) => k.endsWith('Hint') && v === true)
    .map(([k]) => clean(k.replace(/Hint$/, '')));
  const rows = Object.entries(properties).map(([key, schema]) => [
    key,
    typeText(schema),
    required.has(key) ? 'yes' : 'no',
    isSchema(schema) && typeof schema.description === 'string' ? oneLine(schema.description, 60) : '',
  ]);
  const example = [...required].filter((key) => Object.hasOwn(properties, key)).map((key) => showArg(`${key}=...`));
  return [
    `tool:        ${showArg(tool.name)} (service ${clean(tool.serviceName)})`,
    `model name:  ${clean(tool.modelName)}`,
    ...(tool.title !== null ? [`title:       ${clean(tool.title)}`] : []),
    `hints:       ${hints.length > 0 ? hints.join(', ') : '-'} (what the server says; never obeyed)`,
    'description (from the server, untrusted):',
    `  ${tool.description === '' ? '(none)' : cleanBlock(tool.description, '  ')}`,
    'arguments:',
    rows.length === 0 ? '  (none)' : table(['NAME', 'TYPE', 'REQUIRED', 'DESCRIPTION'], rows).replace(/^/gm, '  '),
    'input schema (from the server, untrusted):',
    jsonForTerminal(tool.inputSchema, 2).replace(/^/gm, '  '),
    `call it: wispctl mcp call ${showArg(tool.serviceName)} ${showArg(tool.name)}${example.length > 0 ? ` ${example.join(' ')}` : ''}`,
  ].join('\n');
}
