import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import {
  ErrorCode,
  McpError,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult, type ListPromptsResult, type ListResourceTemplatesResult, type ListResourcesResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { asOmitted, WispError, type PromptInfo, type ResourceInfo, type ResourceTemplateInfo, type Service, type ToolCallResult } from '../core/index.js';
import type { WispClient } from '../control/client.js';
import { fromServer, type Scope } from './catalog.js';
import type { DaemonLink } from './link.js';
import { inScope } from './scope.js';
import { mcpContent, omittedText } from './result.js';

/**
 * Resources, resource templates and prompts of the services a gateway serves, read through
 * the daemon (resources.*, prompts.*: only active services, redacted and capped there, reads
 * and prompts on record in its audit log) and put in MCP's shapes.
 *
 * Served whole (`--service NAME`, own names): URIs and prompt names as the server has them.
 * Aggregated: a URI becomes `wisp://SERVICE/` + the server's URI (a template likewise, so a
 * client expanding it gets a URI that maps back), and a prompt name `SERVICE__NAME`. Service
 * names hold no `/` and are unique, so two services never collide and every mapped URI maps
 * back to exactly one service's URI; the original is in `_meta` too. A prompt name two
 * prompts would share is given to neither.
 */
const SCHEME = 'wisp://';
const SEPARATOR = '__';
/** Where Wisp says which service a resource or prompt is from, and its own URI or name (`_meta`). */
export const META_SERVICE = 'dev.wisp/service';
const META_ORIGINAL = 'dev.wisp/original';

type Content = ToolCallResult['content'][number];

/** resources/list, resources/templates/list, resources/read, prompts/list and prompts/get on `server`; empty lists (and failing reads) while no daemon answers. */
export function serveOfferings(mcp: McpServer, link: DaemonLink, scope: Scope, greet: (ctx: ServerContext) => void): void {
  const server = mcp.server;
  // These lists are read when asked; their changes are announced by notices.ts (which declares listChanged).
  const offerings = new GatewayOfferings(() => link.current(), scope);
  const listing = async <T>(list: () => Promise<T>, none: T): Promise<T> => ((await reachable(link)) ? list() : none);
  const away = (): McpError => new McpError(ErrorCode.InternalError, `DAEMON_NOT_RUNNING: no Wisp daemon answers on ${link.socket}; start it with: wispctl daemon start`);
  server.setRequestHandler('resources/list', (_request, ctx) => (greet(ctx), listing(() => offerings.listResources(), { resources: [] })) as never);
  server.setRequestHandler('resources/templates/list', (_request, ctx) => (greet(ctx), listing(() => offerings.listTemplates(), { resourceTemplates: [] })) as never);
  server.setRequestHandler('prompts/list', (_request, ctx) => (greet(ctx), listing(() => offerings.listPrompts(), { prompts: [] })) as never);
  server.setRequestHandler('resources/read', async (request, ctx) => {
    greet(ctx);
    if (!(await reachable(link))) throw away();
    return (await offerings.read(request.params.uri));
  });
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    greet(ctx);
    if (!(await reachable(link))) throw away();
    return (await offerings.getPrompt(request.params.name, request.params.arguments));
  });
  server.setRequestHandler('completion/complete', async (request, ctx) => {
    greet(ctx);
    if (!(await reachable(link))) throw away();
    return (await offerings.complete(request.params));
  });
}

/** Whether the daemon answers (after one more try to connect). */
async function reachable(link: DaemonLink): Promise<boolean> {
  if (!link.connected) await link.connect();
  return link.connected;
}

export class GatewayOfferings {
  constructor(
    private readonly current: () => Promise<WispClient>,
    private readonly scope: Scope,
  ) {}

  async listResources(): Promise<ListResourcesResult> {
    const per = await this.each((client, service) => client.call('resources.list', { serviceId: service.id }));
    return { resources: per.flatMap(({ service, answer }) => answer.resources.map((resource) => this.resource(service, resource))) };
  }

  async listTemplates(): Promise<ListResourceTemplatesResult> {
    const per = await this.each((client, service) => client.call('resources.templates', { serviceId: service.id }));
    return { resourceTemplates: per.flatMap(({ service, answer }) => answer.templates.map((template) => this.template(service, template))) };
  }

  async read(uri: string): Promise<ReadResourceResult> {
    const client = await this.current();
    const { service, original } = await this.resolveUri(client, uri);
    const answer = await client.call('resources.read', { serviceId: service.id, uri: original, media: true }).catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InvalidParams);
    });
    const contents: ReadResourceResult['contents'] = answer.contents.map((item) => this.readContent(service.name, original, item));
    if (answer.truncated) contents.push({ uri: this.uriOf(service.name, original), mimeType: 'text/plain', text: `[truncated by Wisp: ${answer.originalLength} characters, the first part shown]` });
    return { contents };
  }

  async listPrompts(): Promise<ListPromptsResult> {
    const named = await this.prompts();
    return {
      prompts: [...named].map(([name, { service, prompt }]) => ({
        name,
        ...(prompt.title !== null ? { title: fromServer(service.name, prompt.title) } : {}),
        ...(prompt.description !== null || !this.scope.ownNames ? { description: fromServer(service.name, `prompt "${prompt.name}"${prompt.description !== null ? `: ${prompt.description}` : ''}`) } : {}),
        arguments: prompt.arguments.map((arg) => ({ name: arg.name, ...(arg.description !== null ? { description: arg.description } : {}), required: arg.required })),
        _meta: { [META_SERVICE]: service.name, [META_ORIGINAL]: prompt.name },
      })),
    };
  }

  async getPrompt(name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
    const found = (await this.prompts()).get(name);
    if (found === undefined) throw new McpError(ErrorCode.InvalidParams, `no prompt named ${JSON.stringify(name.slice(0, 128))} is offered by this server`);
    const client = await this.current();
    const answer = await client.call('prompts.get', { serviceId: found.service.id, name: found.prompt.name, media: true, ...(args !== undefined ? { arguments: args } : {}) }).catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InvalidParams);
    });
    const messages: GetPromptResult['messages'] = answer.messages.map((message) => ({ role: message.role, content: this.promptContent(found.service.name, message.content) as never }));
    if (answer.truncated) messages.push({ role: 'user', content: { type: 'text', text: '[truncated by Wisp: the prompt\'s text was over the cap]' } });
    return { ...(answer.description !== null ? { description: fromServer(found.service.name, answer.description) } : {}), messages };
  }

  /** Completions for an argument of a prompt or a resource template, asked of the service it is from (by its own name or URI). */
  async complete(params: CompleteRequest['params']): Promise<CompleteResult> {
    const client = await this.current();
    let target: { service: Service; ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string } };
    if (params.ref.type === 'ref/prompt') {
      const found = (await this.prompts()).get(params.ref.name);
      if (found === undefined) throw new McpError(ErrorCode.InvalidParams, `no prompt named ${JSON.stringify(params.ref.name.slice(0, 128))} is offered by this server`);
      target = { service: found.service, ref: { type: 'ref/prompt', name: found.prompt.name } };
    } else {
      const { service, original } = await this.resolveUri(client, params.ref.uri);
      target = { service, ref: { type: 'ref/resource', uri: original } };
    }
    const context = params.context?.arguments !== undefined ? { context: { arguments: params.context.arguments } } : {};
    const answer = await client.call('completion.complete', { serviceId: target.service.id, ref: target.ref, argument: params.argument, ...context }).catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InvalidParams);
    });
    return { completion: { values: answer.values, ...(answer.total !== null ? { total: answer.total } : {}), hasMore: answer.hasMore } };
  }

  /** The active services in scope, each asked `ask`; a service that stopped meanwhile is left out. */
  private async each<T>(ask: (client: WispClient, service: Service) => Promise<T>): Promise<{ service: Service; answer: Awaited<T> }[]> {
    const client = await this.current();
    const services = await this.services(client);
    const answers = await Promise.all(
      services.map(async (service) => {
        try {
          return { service, answer: await ask(client, service) };
        } catch (error) {
          // Stopped between the two reads (or gone): not offered, as its tools are not.
          if (error instanceof WispError && (error.code === 'SERVICE_NOT_ACTIVE' || error.code === 'SERVICE_NOT_FOUND')) return undefined;
          throw mcpError(error, ErrorCode.InternalError);
        }
      }),
    );
    return answers.filter((a) => a !== undefined);
  }

  private async services(client: WispClient): Promise<Service[]> {
    const [{ services }, served] = await Promise.all([client.call('services.list'), inScope(client, this.scope)]);
    return services.filter((service) => service.connection.status === 'active' && served(service));
  }

  private uriOf(service: string, original: string): string {
    return this.scope.ownNames ? original : `${SCHEME}${service}/${original}`;
  }

  private resource(service: Service, resource: ResourceInfo): ListResourcesResult['resources'][number] {
    return {
      uri: this.uriOf(service.name, resource.uri),
      name: resource.name,
      title: fromServer(service.name, resource.title ?? resource.name),
      ...(resource.description !== null ? { description: fromServer(service.name, resource.description) } : {}),
      ...(resource.mimeType !== null ? { mimeType: resource.mimeType } : {}),
      ...(resource.size !== null ? { size: resource.size } : {}),
      _meta: { [META_SERVICE]: service.name, [META_ORIGINAL]: resource.uri },
    };
  }

  private template(service: Service, template: ResourceTemplateInfo): ListResourceTemplatesResult['resourceTemplates'][number] {
    return {
      uriTemplate: this.uriOf(service.name, template.uriTemplate),
      name: template.name,
      title: fromServer(service.name, template.title ?? template.name),
      ...(template.description !== null ? { description: fromServer(service.name, template.description) } : {}),
      ...(template.mimeType !== null ? { mimeType: template.mimeType } : {}),
      _meta: { [META_SERVICE]: service.name, [META_ORIGINAL]: template.uriTemplate },
    };
  }

  /** Which service a URI the client has is of, and the server's own URI. */
  async resolveUri(client: WispClient, uri: string): Promise<{ service: Service; original: string }> {
    const services = await this.services(client);
    if (this.scope.ownNames) {
      const service = services[0];
      if (service === undefined) throw new McpError(ErrorCode.InvalidParams, `the service this server serves is not active: no resource ${JSON.stringify(uri.slice(0, 128))}`);
      return { service, original: uri };
    }
    const slash = uri.startsWith(SCHEME) ? uri.indexOf('/', SCHEME.length) : -1;
    const service = slash === -1 ? undefined : services.find((s) => s.name === uri.slice(SCHEME.length, slash));
    // Resource not found: -32602 with the URI in data (2026-07-28; the successor SDK sends it so on both eras, and maps a -32002 to it).
    if (service === undefined) throw new McpError(-32602, `no resource ${JSON.stringify(uri.slice(0, 128))} is offered by this server (its URIs are wisp://SERVICE/..., from resources/list)`, { uri });
    return { service, original: uri.slice(slash + 1) };
  }

  private readContent(service: string, asked: string, item: Content): ReadResourceResult['contents'][number] {
    if (item.type === 'resource') return { uri: this.uriOf(service, item.uri), text: item.text, ...(item.mimeType !== null ? { mimeType: item.mimeType } : {}) };
    if (item.type === 'omitted') return { uri: this.uriOf(service, item.uri ?? asked), mimeType: 'text/plain', text: omittedText(item) };
    if (item.type === 'blob') return { uri: this.uriOf(service, item.uri), blob: item.blob, ...(item.mimeType !== null ? { mimeType: item.mimeType } : {}) };
    if (item.type === 'text') return { uri: this.uriOf(service, asked), mimeType: 'text/plain', text: item.text };
    // An image or audio item is no resource content: its marker, as every caller without media gets.
    const omitted = asOmitted(item);
    return { uri: this.uriOf(service, asked), mimeType: 'text/plain', text: omitted !== null ? omittedText(omitted) : '' };
  }

  private promptContent(service: string, item: Content): ReturnType<typeof mcpContent> {
    return mcpContent(item, (original) => this.uriOf(service, original));
  }

  /**
   * The prompts of the services in scope, by their name for this client, unique: own names
   * served whole, `SERVICE__NAME` aggregated; a name two would share is given to neither.
   */
  private async prompts(): Promise<Map<string, { service: Service; prompt: PromptInfo }>> {
    const lists = await this.each((client, service) => client.call('prompts.list', { serviceId: service.id }));
    const named = new Map<string, { service: Service; prompt: PromptInfo } | null>();
    for (const { service, answer } of lists) {
      for (const prompt of answer.prompts) {
        const name = this.scope.ownNames ? prompt.name : `${service.name}${SEPARATOR}${prompt.name}`;
        named.set(name, named.has(name) ? null : { service, prompt });
      }
    }
    return new Map([...named].filter((entry): entry is [string, { service: Service; prompt: PromptInfo }] => entry[1] !== null));
  }
}

/** A daemon's error as the MCP client gets it: the server's own JSON-RPC code where it refused, `fallback` otherwise; the message names Wisp's code. */
export function mcpError(error: unknown, fallback: number): McpError {
  if (error instanceof McpError) return error;
  if (!(error instanceof WispError)) return new McpError(ErrorCode.InternalError, `INTERNAL_ERROR: ${error instanceof Error ? error.message : String(error)}`);
  const server = error.details.server as { code?: unknown } | undefined;
  const code = error.code === 'SERVER_REFUSED' && typeof server?.code === 'number' && Number.isInteger(server.code) ? server.code : error.code === 'NOT_OFFERED' ? -32602 : fallback;
  return new McpError(code, `${error.code}: ${error.message}`);
}
