import { randomUUID } from 'node:crypto';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { transportLink, type StoredService, type TransportFactory } from '../../../src/mcp/index.js';

/**
 * In-process MCP servers for the unit tests of the MCP layer: every activation of the
 * service named `name` gets a fresh server from `make`, linked to the connection over the
 * SDK's in-memory transport. No process, no socket, no network.
 */
export class InMemoryServers {
  private readonly makers = new Map<string, () => McpServer>();
  /** The server of each service's latest activation. */
  readonly latest = new Map<string, McpServer>();
  /** How many links were opened per service (one per activation, one per renewed session). */
  readonly opened = new Map<string, number>();

  add(name: string, make: () => McpServer): this {
    this.makers.set(name, make);
    return this;
  }

  readonly factory: TransportFactory = async (launch) => {
    const make = this.makers.get(launch.config.name);
    if (make === undefined) throw new Error(`no in-memory server for ${launch.config.name}`);
    const server = make();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    this.latest.set(launch.config.name, server);
    this.opened.set(launch.config.name, (this.opened.get(launch.config.name) ?? 0) + 1);
    return transportLink(clientSide);
  };
}

/** A stored service (stdio-shaped; the factory decides how it is reached). */
export function storedService(name: string, over: Partial<StoredService> = {}): StoredService {
  return {
    id: randomUUID(),
    name,
    command: `/in-memory/${name}`,
    args: [],
    cwd: null,
    // Room for a loaded 2-CPU machine: nothing here should ever get near it.
    timeoutMs: 20_000,
    enabled: true,
    configVersion: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

export interface ToolServer {
  readonly server: McpServer;
  /** Every tools/call the server received, in order. */
  readonly calls: { name: string; arguments: Record<string, unknown> }[];
}

/**
 * An McpServer with the given tools as JSON Schema (its own registerTool takes zod), served
 * `pageSize` to a tools/list page (nextCursor is the index of the next page), answering
 * tools/call with `answer`.
 */
export function toolServer(
  tools: Tool[],
  answer: (name: string, args: Record<string, unknown>) => CallToolResult | Promise<CallToolResult> = (name) => ({ content: [{ type: 'text', text: name }] }),
  pageSize = tools.length,
): ToolServer {
  const server = new McpServer({ name: 'in-memory', version: '1.2.3' }, { capabilities: { tools: { listChanged: true } } });
  const calls: ToolServer['calls'] = [];
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const next = start + pageSize;
    return { tools: tools.slice(start, next), ...(next < tools.length ? { nextCursor: String(next) } : {}) };
  });
  server.server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    calls.push({ name: request.params.name, arguments: args });
    return answer(request.params.name, args);
  });
  return { server, calls };
}

/** A tool with an object input schema. */
export function tool(name: string, properties: Record<string, object> = {}, required: string[] = []): Tool {
  return { name, description: `the ${name} tool`, inputSchema: { type: 'object', properties, required } };
}
