import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, WispError, type ToolCallResult } from '../core/index.js';

/**
 * A daemon's tool result as an MCP client gets it. The daemon already normalised and
 * redacted it as for models (mcp/result.ts: text and text resources kept and capped, every
 * other content type a marker, secrets replaced); this only puts it back in MCP's shapes,
 * with the markers and the truncation as text, like the model reads them; structured
 * content as the daemon gave it (binaries as markers, left out over the cap, with a note)
 * (sessions/replies.ts forModel, which is a string for a model API, not MCP content).
 */
export function toMcpResult(result: ToolCallResult): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const item of result.content) {
    if (item.type === 'text') content.push({ type: 'text', text: item.text });
    else if (item.type === 'resource') content.push({ type: 'resource', resource: { uri: item.uri, text: item.text, ...(item.mimeType !== null ? { mimeType: item.mimeType } : {}) } });
    else {
      const size = item.bytes !== null ? `, ${item.bytes} bytes` : '';
      content.push({ type: 'text', text: `[omitted by Wisp: ${item.originalType}${item.mimeType !== null ? ` ${item.mimeType}` : ''}${size}]` });
    }
  }
  // Capped by the daemon already (mcp/result.ts): at most 32,000 characters, binaries as markers.
  if (result.structuredContent !== null && result.text === '') content.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  if (result.structuredOmitted !== null) content.push({ type: 'text', text: `[structured content omitted by Wisp: ${result.structuredOmitted.reason}]` });
  if (result.originalLength > result.text.length) content.push({ type: 'text', text: `[truncated by Wisp: ${result.originalLength} characters, the first ${LIMITS.maxResultChars} shown]` });
  return { content, ...(result.structuredContent !== null ? { structuredContent: result.structuredContent } : {}) };
}

/** A failure as the calling client gets it: an isError result that names the code (APPROVAL_DENIED: ...). */
export function failureResult(error: unknown): CallToolResult {
  const text = error instanceof WispError ? `${error.code}: ${error.message}` : `INTERNAL_ERROR: ${error instanceof Error ? error.message : String(error)}`;
  return { content: [{ type: 'text', text }], isError: true };
}
