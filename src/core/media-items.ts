import type { ToolCallResult } from './wire/shapes.js';

export type ResultItem = ToolCallResult['content'][number];
export type OmittedItem = Extract<ResultItem, { type: 'omitted' }>;

/** Decoded bytes of base64 text (its length, less the padding). */
export function base64Size(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * A result item as a caller that does not render media sees it: an image, audio or binary
 * resource passed whole (to the gateway, for a service whose media setting is on) is the
 * marker every other caller gets; text items are null (they are shown as they are).
 */
export function asOmitted(item: ResultItem): OmittedItem | null {
  if (item.type === 'omitted') return item;
  if (item.type === 'image' || item.type === 'audio') return { type: 'omitted', originalType: item.type, mimeType: item.mimeType, bytes: base64Size(item.data), uri: null, name: null };
  if (item.type === 'blob') return { type: 'omitted', originalType: 'resource', mimeType: item.mimeType, bytes: base64Size(item.blob), uri: item.uri, name: null };
  return null;
}
