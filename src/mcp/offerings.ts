import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, type PromptInfo, type PromptMessage, type ResourceInfo, type ResourceTemplateInfo, type ToolCallResult } from '../core/index.js';
import { Failure } from './failure.js';
import type { ModernPeer } from './modern.js';
import { normalizeResult } from './result.js';

/**
 * What a server offers besides tools, asked of it when a client asks (the gateway serves
 * them): its lists read whole (every page, up to a cap), a resource read, a prompt got. Every
 * string is redacted before it is cut; text contents and prompt messages are normalised as
 * tool results are (result.ts: capped, binaries and links as markers).
 */
export type OfferKind = 'resources/list' | 'resources/templates/list' | 'resources/read' | 'prompts/list' | 'prompts/get' | 'completion/complete' | 'resources/subscribe' | 'resources/unsubscribe';

/** What the server declared at initialize (or its 2026 discovery) besides tools. */
export interface Offers {
  readonly resources: boolean;
  readonly prompts: boolean;
  readonly completions: boolean;
  /** resources.subscribe declared (2025 era only: a 2026 server is not subscribed to). */
  readonly subscribe: boolean;
}

type RequestOptions = { timeout: number; signal: AbortSignal };

/** One request of `kind` on either era's client. */
export function sendOffer(client: Client | ModernPeer, kind: OfferKind, params: Record<string, unknown>, options: RequestOptions): Promise<unknown> {
  // By its method, not instanceof: a value import of modern.js would load both SDKs when the daemon starts (daemon-startup.test.ts).
  if ('offer' in client) return client.offer(kind, params, options);
  switch (kind) {
    case 'resources/list':
      return client.listResources(params, options);
    case 'resources/templates/list':
      return client.listResourceTemplates(params, options);
    case 'resources/read':
      return client.readResource(params as { uri: string }, options);
    case 'prompts/list':
      return client.listPrompts(params, options);
    case 'prompts/get':
      return client.getPrompt(params as { name: string }, options);
    case 'completion/complete':
      return client.complete(params as never, options);
    case 'resources/subscribe':
      return client.subscribeResource(params as { uri: string }, options);
    case 'resources/unsubscribe':
      return client.unsubscribeResource(params as { uri: string }, options);
  }
}

/** A URI or name over these is left out (a cut one would name something else); display text over its cap is cut. */
const MAX_URI_CHARS = 2048;
const MAX_NAME_CHARS = 256;
const MAX_TITLE_CHARS = 256;
const MAX_DESCRIPTION_CHARS = 2048;
const MAX_MIME_CHARS = 128;
const MAX_PROMPT_ARGUMENTS = 32;

type Redact = <T>(value: T) => T;
type Raw = Record<string, unknown>;

function text(value: unknown, max: number): string | null {
  return typeof value === 'string' ? value.slice(0, max) : null;
}

/** An identifier (URI, template, name): whole or not at all. */
function identifier(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}

function resourceInfo(raw: Raw): ResourceInfo | undefined {
  const uri = identifier(raw.uri, MAX_URI_CHARS);
  const name = identifier(raw.name, MAX_NAME_CHARS);
  if (uri === undefined || name === undefined) return undefined;
  const size = typeof raw.size === 'number' && Number.isSafeInteger(raw.size) && raw.size >= 0 ? raw.size : null;
  return { uri, name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS), mimeType: text(raw.mimeType, MAX_MIME_CHARS), size };
}

function templateInfo(raw: Raw): ResourceTemplateInfo | undefined {
  const uriTemplate = identifier(raw.uriTemplate, MAX_URI_CHARS);
  const name = identifier(raw.name, MAX_NAME_CHARS);
  if (uriTemplate === undefined || name === undefined) return undefined;
  return { uriTemplate, name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS), mimeType: text(raw.mimeType, MAX_MIME_CHARS) };
}

function promptInfo(raw: Raw): PromptInfo | undefined {
  const name = identifier(raw.name, MAX_NAME_CHARS);
  if (name === undefined) return undefined;
  const given = Array.isArray(raw.arguments) ? (raw.arguments as unknown[]) : [];
  if (given.length > MAX_PROMPT_ARGUMENTS) return undefined;
  const args: PromptInfo['arguments'] = [];
  for (const item of given) {
    const arg = (typeof item === 'object' && item !== null ? item : {}) as Raw;
    const argName = identifier(arg.name, MAX_NAME_CHARS);
    // A prompt whose arguments cannot all be named cannot be filled as its server means it.
    if (argName === undefined) return undefined;
    args.push({ name: argName, description: text(arg.description, MAX_DESCRIPTION_CHARS), required: arg.required === true });
  }
  return { name, title: text(raw.title, MAX_TITLE_CHARS), description: text(raw.description, MAX_DESCRIPTION_CHARS), arguments: args };
}

/** What each list is called in its result, how many are kept, and how one item is read. */
const LISTS = {
  'resources/list': { key: 'resources', max: LIMITS.maxResourcesPerService, item: resourceInfo },
  'resources/templates/list': { key: 'resourceTemplates', max: LIMITS.maxResourceTemplatesPerService, item: templateInfo },
  'prompts/list': { key: 'prompts', max: LIMITS.maxPromptsPerService, item: promptInfo },
} as const;

export type ListKind = keyof typeof LISTS;
type ListItem<K extends ListKind> = NonNullable<ReturnType<(typeof LISTS)[K]['item']>>;

/**
 * A whole list, page by page: at most its cap of items (the rest counted in `omitted`, and
 * no page read past the cap), redacted before each item is read. A server still paging after
 * LIMITS.maxOfferPages pages, or answering with no list, is a PROTOCOL_ERROR.
 */
export async function readList<K extends ListKind>(kind: K, send: (params: Record<string, unknown>) => Promise<unknown>, redact: Redact): Promise<{ items: ListItem<K>[]; omitted: number }> {
  const { key, max, item } = LISTS[kind];
  const items: ListItem<K>[] = [];
  let omitted = 0;
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= LIMITS.maxOfferPages) throw new Failure('PROTOCOL_ERROR', `${kind} was still paging after ${LIMITS.maxOfferPages} pages`);
    const answer = (await send(cursor === undefined ? {} : { cursor })) as Raw;
    const list = answer[key];
    if (!Array.isArray(list)) throw new Failure('PROTOCOL_ERROR', `the server's answer to ${kind} has no ${key} list`);
    for (const raw of list as unknown[]) {
      const read = typeof raw === 'object' && raw !== null ? (item(redact(raw as Raw)) as ListItem<K> | undefined) : undefined;
      if (read === undefined || items.length >= max) omitted += 1;
      else items.push(read);
    }
    const next = answer.nextCursor;
    if (typeof next !== 'string' || items.length >= max) return { items, omitted };
    cursor = next;
  }
}

type Content = ToolCallResult['content'][number];

/** A resources/read answer: each content a resource (text, redacted, capped) or a marker (a blob), with its own URI. */
export function readContents(answer: unknown, redact: Redact, media = false): { contents: Content[]; truncated: boolean; originalLength: number } {
  const contents = (answer as Raw | null)?.contents;
  if (!Array.isArray(contents) || !contents.every((c: unknown) => typeof c === 'object' && c !== null && typeof (c as Raw).uri === 'string')) {
    throw new Failure('PROTOCOL_ERROR', "the server's answer to resources/read is not a list of contents, each with its URI");
  }
  const normalized = normalizeResult({ content: contents.map((resource: unknown) => ({ type: 'resource', resource })) } as CallToolResult, redact, undefined, { media });
  return { contents: normalized.content, truncated: normalized.truncated, originalLength: normalized.originalLength };
}

/** A prompts/get answer: its messages' contents normalised together (one cap across them), each kept with its role. */
export function promptMessages(answer: unknown, redact: Redact, media = false): { description: string | null; messages: PromptMessage[]; truncated: boolean } {
  const raw = (answer as Raw | null) ?? {};
  const messages = raw.messages;
  if (!Array.isArray(messages)) throw new Failure('PROTOCOL_ERROR', "the server's answer to prompts/get has no messages list");
  const roles: PromptMessage['role'][] = [];
  const contents: unknown[] = [];
  for (const message of messages as unknown[]) {
    const m = (typeof message === 'object' && message !== null ? message : {}) as Raw;
    if ((m.role !== 'user' && m.role !== 'assistant') || typeof m.content !== 'object' || m.content === null) {
      throw new Failure('PROTOCOL_ERROR', "a message of the server's prompt has no user or assistant role, or no content");
    }
    roles.push(m.role);
    contents.push(m.content);
  }
  const normalized = normalizeResult({ content: contents } as CallToolResult, redact, undefined, { media });
  return {
    description: text(redact(raw.description), MAX_DESCRIPTION_CHARS),
    messages: normalized.content.map((content, i) => ({ role: roles[i] ?? 'user', content })),
    truncated: normalized.truncated,
  };
}

/** A completion value is cut to this; at most MAX_COMPLETIONS values are kept (MCP's own cap). */
const MAX_COMPLETION_CHARS = 1024;
const MAX_COMPLETIONS = 100;

/** A completion/complete answer: its values redacted and cut, at most 100; total and hasMore as the server said (checked). */
export function completionValues(answer: unknown, redact: Redact): { values: string[]; total: number | null; hasMore: boolean } {
  const completion = (answer as Raw | null)?.completion as Raw | null | undefined;
  if (completion === undefined || completion === null || !Array.isArray(completion.values)) throw new Failure('PROTOCOL_ERROR', "the server's answer to completion/complete has no values list");
  const given = (completion.values as unknown[]).filter((v): v is string => typeof v === 'string');
  const values = given.slice(0, MAX_COMPLETIONS).map((v) => redact(v).slice(0, MAX_COMPLETION_CHARS));
  const total = typeof completion.total === 'number' && Number.isSafeInteger(completion.total) && completion.total >= 0 ? completion.total : null;
  return { values, total, hasMore: completion.hasMore === true || given.length > MAX_COMPLETIONS };
}
