import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, WispError, type ToolCallResult, type ToolInfo } from '../core/index.js';

type Item = ToolCallResult['content'][number];
type Omitted = Extract<Item, { type: 'omitted' }>;

/** A resource link's URI is passed on when it is at most this long and parses as a URI; its name is cut to NAME_CHARS. */
const LINK_URI_CHARS = 2048;
const NAME_CHARS = 200;

/** Schemes a link is never passed on with: a client that makes the link clickable would run it, or show a page made by the server. */
const SCRIPT_SCHEMES = new Set(['javascript:', 'vbscript:', 'data:', 'blob:']);

/** A resource_link as MCP has it: its URI (never opened by Wisp), name and type; null when the URI is not one to pass on. */
function resourceLink(item: Omitted): CallToolResult['content'][number] | null {
  if (item.originalType !== 'resource_link' || item.uri === null || item.uri.length > LINK_URI_CHARS || !URL.canParse(item.uri)) return null;
  if (SCRIPT_SCHEMES.has(new URL(item.uri).protocol)) return null;
  return {
    type: 'resource_link',
    uri: item.uri,
    name: (item.name ?? item.uri).slice(0, NAME_CHARS),
    ...(item.mimeType !== null ? { mimeType: item.mimeType.slice(0, NAME_CHARS) } : {}),
    ...(item.bytes !== null ? { size: item.bytes } : {}),
  };
}

function marker(item: Omitted): string {
  const size = item.bytes !== null ? `, ${item.bytes} bytes` : '';
  return `[omitted by Wisp: ${item.originalType}${item.mimeType !== null ? ` ${item.mimeType}` : ''}${size}]`;
}

/**
 * One content item of the daemon's (normalised, redacted) as MCP has it: text, a text
 * resource (its URI through `uri`: the gateway's mapping of a served URI), a resource link,
 * or the marker as text.
 */
export function mcpContent(item: Item, uri: (original: string) => string = (original) => original): CallToolResult['content'][number] {
  if (item.type === 'text') return { type: 'text', text: item.text };
  if (item.type === 'resource') return { type: 'resource', resource: { uri: uri(item.uri), text: item.text, ...(item.mimeType !== null ? { mimeType: item.mimeType } : {}) } };
  // Media the daemon passed whole (the caller asked, the service's media setting is on; checked there: type, base64, size).
  if ('data' in item) return { type: item.type, mimeType: item.mimeType, data: item.data };
  if (item.type === 'blob') return { type: 'resource', resource: { uri: uri(item.uri), blob: item.blob, ...(item.mimeType !== null ? { mimeType: item.mimeType } : {}) } };
  return resourceLink(item) ?? { type: 'text', text: marker(item) };
}

/** The marker an omitted item leaves (`[omitted by Wisp: image image/png, 1024 bytes]`). */
export function omittedText(item: Omitted): string {
  return marker(item);
}

/**
 * A daemon's tool result as an MCP client gets it. The daemon already normalised and
 * redacted it as for models (mcp/result.ts: text and text resources kept and capped, every
 * other content type a marker, secrets replaced); this only puts it back in MCP's shapes,
 * with the markers and the truncation as text, like the model reads them; resource links as
 * links (their URI, name and type: Wisp never opens them); structured content as the daemon
 * gave it (binaries as markers, checked against the tool's outputSchema, left out over the
 * cap or when it does not match, with a note) (sessions/replies.ts forModel, which is a
 * string for a model API, not MCP content).
 *
 * A tool offered with an outputSchema promises structured content that matches it, and SDK
 * clients refuse a result without it (a protocol error that tells the user nothing): such a
 * result without it (the server gave none, it did not match, it was over the cap) is a tool
 * error that says why.
 */
export function toMcpResult(result: ToolCallResult, tool: Pick<ToolInfo, 'name' | 'serviceName' | 'outputSchema'>): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const item of result.content) content.push(mcpContent(item));
  // Capped by the daemon already (mcp/result.ts): at most 32,000 characters, binaries as markers.
  if (result.structuredContent !== null && result.text === '') content.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  if (result.structuredOmitted !== null) content.push({ type: 'text', text: `[structured content omitted by Wisp: ${result.structuredOmitted.reason}]` });
  if (result.originalLength > result.text.length) content.push({ type: 'text', text: `[truncated by Wisp: ${result.originalLength} characters, the first ${LIMITS.maxResultChars} shown]` });
  if (tool.outputSchema !== null && result.structuredContent === null) {
    const why = result.structuredOmitted !== null ? `its structured content was left out (${result.structuredOmitted.reason})` : 'the server gave no structured content';
    content.unshift({ type: 'text', text: `PROTOCOL_ERROR: ${tool.serviceName}/${tool.name} has an outputSchema, but ${why}; what the server returned follows.` });
    return { content, isError: true };
  }
  return { content, ...(result.structuredContent !== null ? { structuredContent: result.structuredContent } : {}) };
}

/** A failure as the calling client gets it: an isError result that names the code (APPROVAL_DENIED: ...). */
export function failureResult(error: unknown): CallToolResult {
  const text = error instanceof WispError ? `${error.code}: ${error.message}` : `INTERNAL_ERROR: ${error instanceof Error ? error.message : String(error)}`;
  return { content: [{ type: 'text', text }], isError: true };
}
