import { asOmitted, LIMITS, type ToolCallResult } from '../core/index.js';

/** A tool call that did not happen or did not succeed, as the model reads it (never a crash of the task). */
export function failure(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The marker that stands where media was left out: `[omitted image image/png, 68 bytes]`. */
export function omittedMarker(item: Extract<ToolCallResult['content'][number], { type: 'omitted' }>): string {
  return `[omitted ${item.originalType}${item.mimeType !== null ? ` ${item.mimeType}` : ''}${item.bytes !== null ? `, ${item.bytes} bytes` : ''}]`;
}

/**
 * What the model reads back from a call: the (capped, redacted) text parts and, where media
 * was, its marker, in the server's order (a caption before its image stays before it). The
 * parts are capped together as result.text is (normalizeResult).
 */
export function forModel(result: ToolCallResult): string {
  const parts = result.content.map((item) => {
    const omitted = asOmitted(item);
    return omitted !== null ? omittedMarker(omitted) : item.type === 'text' || item.type === 'resource' ? item.text : '';
  });
  if (result.text === '') {
    if (result.structuredContent !== null) parts.push(JSON.stringify(result.structuredContent));
    else if (result.structuredOmitted !== null) parts.push(`[structured content omitted: ${result.structuredOmitted.reason}]`);
  }
  if (result.originalLength > result.text.length) parts.push(`[truncated: ${result.originalLength} characters, the first ${LIMITS.maxResultChars} shown]`);
  return parts.filter((p) => p !== '').join('\n');
}
