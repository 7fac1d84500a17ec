import { LIMITS, type ToolCallResult } from '../core/index.js';

/** A tool call that did not happen or did not succeed, as the model reads it (never a crash of the task). */
export function failure(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** What the model reads back from a call: the (capped, redacted) text, markers for what was omitted. */
export function forModel(result: ToolCallResult): string {
  const parts = [result.text];
  for (const item of result.content) {
    if (item.type === 'omitted') parts.push(`[omitted ${item.originalType}${item.mimeType !== null ? ` ${item.mimeType}` : ''}${item.bytes !== null ? `, ${item.bytes} bytes` : ''}]`);
  }
  if (result.structuredContent !== null && result.text === '') parts.push(JSON.stringify(result.structuredContent).slice(0, LIMITS.maxResultChars));
  if (result.truncated) parts.push(`[truncated: ${result.originalLength} characters, the first ${LIMITS.maxResultChars} shown]`);
  return parts.filter((p) => p !== '').join('\n');
}
