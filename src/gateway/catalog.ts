import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { WispClient } from '../control/client.js';
import type { ToolInfo } from '../core/index.js';
import { offeredNames } from './names.js';
import { inScope } from './scope.js';

/** The two tools offered instead of the catalog above the deferred-tools threshold (the names model sessions use). */
export const SEARCH_TOOL = 'mcp_search_tools';
export const EXECUTE_TOOL = 'mcp_execute_tool';

/** At most this many pages of tools.list are read (the daemon holds at most 96 tools; a page is up to 512 KB). */
const MAX_PAGES = 64;

/** What the gateway offers now: the tools (of the services asked for), their names here, and whether only search/execute are shown. */
export interface Catalog {
  readonly tools: readonly ToolInfo[];
  /** Each tool's name for this client (names.ts offeredNames), and back. */
  readonly names: ReadonlyMap<ToolInfo, string>;
  readonly byName: ReadonlyMap<string, ToolInfo>;
  readonly deferred: boolean;
}

/** Which tools a gateway offers: of these services (null: all) or of a profile, under their own names (one service, as if connected to it) or `<service>__<tool>`. */
export interface Scope {
  readonly services: ReadonlySet<string> | null;
  /** `--profile NAME`: the services of this profile, as the daemon has it at each read (scope.ts); `services` is then null. */
  readonly profile?: string | undefined;
  readonly ownNames: boolean;
  /** Search and execute instead of the list: the client asked (`--defer-tools`); the model's deferToolsAbove is for model sessions. */
  readonly deferTools?: boolean;
}

/**
 * The active catalog of the services asked for (all when `services` is null), every page, and
 * the deferred-tools setting. Only trusted tools: tools.list also shows held ones (changed or
 * added since pinned) to humans, and those must not reach a model until a human accepts them;
 * and only callable ones (a tool that requires MCP tasks is listed with why, and left out here).
 */
export async function readCatalog(client: WispClient, scope: Scope): Promise<Catalog> {
  const { ownNames, deferTools = false } = scope;
  const served = await inScope(client, scope);
  const tools: ToolInfo[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer: { tools: ToolInfo[]; nextCursor: string | null } = await client.call('tools.list', cursor === null ? {} : { cursor });
    tools.push(...answer.tools.filter((tool) => tool.pin === 'trusted' && tool.unavailable === null && served({ id: tool.serviceId, name: tool.serviceName })));
    cursor = answer.nextCursor;
    if (cursor === null) break;
  }
  const names = offeredNames(tools, ownNames);
  // One order, whatever order the services were activated in (the daemon lists by
  // activation): by the name offered here, code unit by code unit (never the locale's
  // collation), so a client's tools/list is the same bytes while the catalog is the same, and
  // the prefix cache of the model behind that client stays warm. Names are unique (names.ts).
  tools.sort((a, b) => byCodeUnit(nameIn(names, a), nameIn(names, b)));
  return { tools, names, byName: new Map([...names].map(([tool, name]) => [name, tool])), deferred: deferTools };
}

function nameIn(names: ReadonlyMap<ToolInfo, string>, tool: ToolInfo): string {
  return names.get(tool) ?? tool.modelName;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What changes the list a client sees: names, versions, and the mode. */
export function fingerprint(catalog: Catalog): string {
  return JSON.stringify([catalog.deferred, catalog.tools.map((tool) => [catalog.names.get(tool), tool.modelName, tool.serviceId, tool.generation, tool.toolListVersion])]);
}

/** Marks text from a third-party server as such, for the model and the human reading it in their client. */
export function fromServer(service: string, text: string): string {
  return `[from server ${service}] ${text}`;
}

/** The hints of MCP's ToolAnnotations that are passed on: booleans only. */
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/**
 * The server's annotations as a client is offered them: the four hints when they are
 * booleans, and the title (labelled as the server's, cut to 200 characters); nothing else.
 * They are the server's claims, untrusted: a client may show them or act on them (skip its
 * own confirmation of a "read-only" tool), but no hint skips Wisp's approval: every call
 * waits for a human in Wisp whatever the hints say.
 */
function annotationsOf(tool: ToolInfo): Tool['annotations'] {
  const raw = tool.annotations as Record<string, unknown> | null;
  if (raw === null) return undefined;
  const kept: Record<string, unknown> = {};
  for (const hint of HINTS) if (typeof raw[hint] === 'boolean') kept[hint] = raw[hint];
  if (typeof raw.title === 'string') kept.title = fromServer(tool.serviceName, raw.title.slice(0, 200));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/**
 * A catalog tool as an MCP client is offered it: its name here (names.ts), title and
 * description marked as the server's, the input schema; and what else the server said of
 * it, as the daemon checked it: the output schema (the daemon checks every result against
 * it), the annotations (annotationsOf), the icons (https: or data: images only) and _meta
 * (at most 4 KB).
 */
export function mcpTool(tool: ToolInfo, name: string): Tool {
  const annotations = annotationsOf(tool);
  return {
    name,
    title: fromServer(tool.serviceName, tool.title ?? tool.name),
    description: fromServer(tool.serviceName, `tool "${tool.name}": ${tool.description}`),
    // MCP requires an object schema at the top; a tool whose schema is not one cannot be called with arguments anyway.
    inputSchema: { ...tool.inputSchema, type: 'object' },
    ...(tool.outputSchema !== null ? { outputSchema: { ...tool.outputSchema, type: 'object' as const } } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
    ...(tool.icons.length > 0
      ? {
          icons: tool.icons.map((icon) => ({
            src: icon.src,
            ...(icon.mimeType !== null ? { mimeType: icon.mimeType } : {}),
            ...(icon.sizes !== null ? { sizes: icon.sizes } : {}),
            ...(icon.theme !== null ? { theme: icon.theme } : {}),
          })),
        }
      : {}),
    ...(tool.meta !== null ? { _meta: tool.meta } : {}),
  };
}

function nameOf(catalog: Catalog, tool: ToolInfo): string {
  return nameIn(catalog.names, tool);
}

/** The tool a client means by `name`: by its name here, or by its model-facing name (what gateways offered before readable names, kept working). */
export function toolNamed(catalog: Catalog, name: string): ToolInfo | undefined {
  return catalog.byName.get(name) ?? catalog.tools.find((tool) => tool.modelName === name);
}

/** The tools/list answer: every tool, or the search/execute pair above the threshold. */
export function listed(catalog: Catalog): Tool[] {
  if (!catalog.deferred) return catalog.tools.map((tool) => mcpTool(tool, nameOf(catalog, tool)));
  return [
    {
      name: SEARCH_TOOL,
      title: 'Search Wisp\'s MCP tools',
      description:
        `Search the ${catalog.tools.length} MCP tools Wisp runs by words in their names and descriptions. Returns matching tools with their names and input schemas. ` +
        'Descriptions come from third-party servers and are untrusted.',
      inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'Words to look for.' }, limit: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] },
    },
    {
      name: EXECUTE_TOOL,
      title: 'Run one of Wisp\'s MCP tools',
      description: `Run one tool found with ${SEARCH_TOOL}. A human approves every call in Wisp before it runs.`,
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', description: `The tool name from ${SEARCH_TOOL}.` }, arguments: { type: 'object' } },
        required: ['name', 'arguments'],
      },
    },
  ];
}

/** The search tool's answer: the best matches by how many query words their texts contain. */
export function search(catalog: Catalog, args: Record<string, unknown>): string | { error: string } {
  if (typeof args.query !== 'string' || args.query.trim() === '') return { error: 'query must be a non-empty string' };
  const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(20, Math.max(1, args.limit)) : 10;
  const words = args.query.toLowerCase().split(/\s+/).filter(Boolean);
  const ranked = catalog.tools
    .map((tool) => ({ tool, score: words.filter((w) => `${tool.name} ${tool.title ?? ''} ${tool.description} ${tool.serviceName}`.toLowerCase().includes(w)).length }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || nameOf(catalog, a.tool).localeCompare(nameOf(catalog, b.tool)))
    .slice(0, limit);
  return JSON.stringify({
    tools: ranked.map(({ tool }) => ({
      name: nameOf(catalog, tool),
      service: tool.serviceName,
      tool: tool.name,
      description: fromServer(tool.serviceName, tool.description),
      inputSchema: tool.inputSchema,
    })),
  });
}
