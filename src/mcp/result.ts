import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, type ToolCallResult } from '../core/index.js';

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
 *
 * Every string of the result (texts, URIs, mime types, names, annotations, _meta, keys)
 * is redacted first, before anything is cut: a secret straddling the cut never leaves a
 * piece of itself behind.
 */
export function normalizeResult(raw: CallToolResult, redact: <T>(value: T) => T, maxChars: number = LIMITS.maxResultChars): NormalizedResult {
  const result = redact(raw);
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
