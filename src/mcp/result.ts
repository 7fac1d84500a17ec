import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, type ToolCallResult } from '../control/index.js';

type Content = ToolCallResult['content'][number];

export interface NormalizedResult {
  readonly content: Content[];
  readonly structuredContent: Record<string, unknown> | null;
  readonly text: string;
  readonly truncated: boolean;
  readonly originalLength: number;
}

function base64Bytes(data: unknown): number | null {
  if (typeof data !== 'string') return null;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * What a caller (and the model) is given from a tool result: text, embedded text
 * resources and structured content; images, audio, binary resources and links become a
 * marker with type and size, and are never passed on or opened. The text is capped at
 * 32,000 characters with an explicit flag and the original length.
 */
export function normalizeResult(result: CallToolResult, maxChars: number = LIMITS.maxResultChars): NormalizedResult {
  const content: Content[] = [];
  const texts: string[] = [];
  for (const item of result.content) {
    switch (item.type) {
      case 'text':
        content.push({ type: 'text', text: item.text });
        texts.push(item.text);
        break;
      case 'resource':
        if ('text' in item.resource && typeof item.resource.text === 'string') {
          content.push({ type: 'resource', uri: item.resource.uri, mimeType: item.resource.mimeType ?? null, text: item.resource.text });
          texts.push(item.resource.text);
        } else {
          const blob = (item.resource as { blob?: unknown }).blob;
          content.push({ type: 'omitted', originalType: 'resource', mimeType: item.resource.mimeType ?? null, bytes: base64Bytes(blob), uri: item.resource.uri });
        }
        break;
      case 'image':
      case 'audio':
        content.push({ type: 'omitted', originalType: item.type, mimeType: item.mimeType, bytes: base64Bytes(item.data), uri: null });
        break;
      case 'resource_link':
        content.push({ type: 'omitted', originalType: 'resource_link', mimeType: item.mimeType ?? null, bytes: item.size ?? null, uri: item.uri });
        break;
      default:
        content.push({ type: 'omitted', originalType: String((item as { type?: unknown }).type), mimeType: null, bytes: null, uri: null });
    }
  }
  const structured = result.structuredContent ?? null;
  const full = texts.join('\n');
  const truncated = full.length > maxChars;
  // Each text part is capped too, so the parts never carry more than the joined text does.
  let budget = maxChars;
  for (const item of content) {
    if (item.type === 'text' || item.type === 'resource') {
      if (item.text.length > budget) item.text = item.text.slice(0, budget);
      budget = Math.max(0, budget - item.text.length - 1);
    }
  }
  return { content, structuredContent: structured, text: truncated ? full.slice(0, maxChars) : full, truncated, originalLength: full.length };
}

/** Known secret values never leave in a result: not in text, resources or structured content. */
export function redactResult(result: NormalizedResult, redact: (text: string) => string): NormalizedResult {
  const deep = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    if (Array.isArray(value)) return value.map(deep);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), deep(v)]));
    }
    return value;
  };
  return {
    ...result,
    content: result.content.map((item) => (item.type === 'text' || item.type === 'resource' ? { ...item, text: redact(item.text) } : item)),
    structuredContent: result.structuredContent === null ? null : (deep(result.structuredContent) as Record<string, unknown>),
    text: redact(result.text),
  };
}
