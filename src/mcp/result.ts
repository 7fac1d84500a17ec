import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, type ToolCallResult } from '../core/index.js';
import type { ArgumentValidator } from './tool-catalog.js';

type Content = ToolCallResult['content'][number];

export interface NormalizedResult {
  readonly content: Content[];
  readonly structuredContent: Record<string, unknown> | null;
  /** Why the server's structured content is not given (null when it is, or when there was none). */
  readonly structuredOmitted: { readonly characters: number; readonly reason: string } | null;
  readonly text: string;
  /** Something was cut: the text (over maxChars), or the structured content (left out). */
  readonly truncated: boolean;
  readonly originalLength: number;
}

/** A string at least this long, made only of base64 characters (standard or URL-safe), is taken for binary data. */
export const BINARY_STRING_MIN_CHARS = 256;
const BASE64_TEXT = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** A data: URI; its media type is kept (cut) in the marker. */
const DATA_URI = /^data:([^,;]{0,100})[^,]*,/i;

function base64Bytes(data: unknown): number | null {
  if (typeof data !== 'string') return null;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** The marker that stands where binary data was: its size, never its bytes. */
function binaryMarker(what: string, data: string): string {
  return `[omitted by Wisp: ${what}, ${base64Bytes(data.replace(/^data:[^,]*,/i, '')) ?? 0} bytes]`;
}

function isBinaryText(value: string): boolean {
  return value.length >= BINARY_STRING_MIN_CHARS && BASE64_TEXT.test(value);
}

/**
 * Structured content with its binaries replaced by markers (strings, so a schema's string
 * stays a string): every data: URI, the `data` or `blob` of an object that has a
 * `mimeType` (MCP's image, audio and blob shapes), and any other string of 256 or more
 * characters made only of base64 characters. Keys are kept as they are. Recursion is
 * bounded here too, not only by the transports' refusal of a message nesting more than
 * LIMITS.maxServerMessageNesting levels: a level deeper than that is replaced by a marker
 * (a RangeError out of this walk failed the call INTERNAL_ERROR when that refusal was bypassed).
 */
function withoutBinaries(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const uri = DATA_URI.exec(value);
    if (uri !== null) return binaryMarker(`data URI${uri[1] !== '' ? ` ${uri[1]}` : ''}`, value);
    return isBinaryText(value) ? binaryMarker('binary', value) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= LIMITS.maxServerMessageNesting) return `[omitted by Wisp: nested more than ${LIMITS.maxServerMessageNesting} levels deep]`;
  if (Array.isArray(value)) return value.map((item) => withoutBinaries(item, depth + 1));
  const record = value as Record<string, unknown>;
  const typed = typeof record.mimeType === 'string';
  // fromEntries defines each key as an own property: a "__proto__" key stays a key.
  return Object.fromEntries(
    Object.entries(record).map(([key, item]) => [
      key,
      typed && (key === 'data' || key === 'blob') && typeof item === 'string' && !DATA_URI.test(item)
        ? binaryMarker(`${key} ${String(record.mimeType).slice(0, 100)}`, item)
        : withoutBinaries(item, depth + 1),
    ]),
  );
}

/**
 * The structured content as given: binaries as markers, then capped. Capped means: its JSON
 * (after the markers) is at most `maxChars` characters, or it is left out whole (a cut JSON
 * object is no object), with its length and why.
 */
function capStructured(structured: Record<string, unknown> | undefined, maxChars: number): Pick<NormalizedResult, 'structuredContent' | 'structuredOmitted'> {
  if (structured === undefined) return { structuredContent: null, structuredOmitted: null };
  const kept = withoutBinaries(structured) as Record<string, unknown>;
  const characters = JSON.stringify(kept).length;
  if (characters <= maxChars) return { structuredContent: kept, structuredOmitted: null };
  return { structuredContent: null, structuredOmitted: { characters, reason: `its JSON is ${characters} characters, over the ${maxChars}-character cap` } };
}

/**
 * What a caller (and the model) is given from a tool result: text, embedded text
 * resources and structured content; images, audio, binary resources and links become a
 * marker with type and size, and are never passed on or opened. The text is capped at
 * 32,000 characters with an explicit flag and the original length. Structured content
 * gets the same two rules (capStructured): binaries become markers, and over 32,000
 * characters of JSON it is left out, with `structuredOmitted` saying so and the flag set.
 *
 * Every string of the result (texts, URIs, mime types, names, annotations, _meta, keys)
 * is redacted first, before anything is cut: a secret straddling the cut never leaves a
 * piece of itself behind.
 */
export function normalizeResult(raw: CallToolResult, redact: <T>(value: T) => T, maxChars: number = LIMITS.maxResultChars, options: { readonly media?: boolean } = {}): NormalizedResult {
  const result = redact(raw);
  const content: Content[] = [];
  const texts: string[] = [];
  const media = options.media === true ? new MediaBudget() : null;
  for (const item of result.content) {
    const whole = media?.pass(item) ?? null;
    if (whole !== null) {
      content.push(whole);
      continue;
    }
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
          content.push({ type: 'omitted', originalType: 'resource', mimeType: item.resource.mimeType ?? null, bytes: base64Bytes(blob), uri: item.resource.uri, name: null });
        }
        break;
      case 'image':
      case 'audio':
        content.push({ type: 'omitted', originalType: item.type, mimeType: item.mimeType, bytes: base64Bytes(item.data), uri: null, name: null });
        break;
      case 'resource_link':
        content.push({ type: 'omitted', originalType: 'resource_link', mimeType: item.mimeType ?? null, bytes: item.size ?? null, uri: item.uri, name: item.name });
        break;
      default:
        content.push({ type: 'omitted', originalType: String((item as { type?: unknown }).type), mimeType: null, bytes: null, uri: null, name: null });
    }
  }
  const structured = capStructured(result.structuredContent, maxChars);
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
  return {
    content,
    ...structured,
    text: truncated ? full.slice(0, maxChars) : full,
    truncated: truncated || structured.structuredOmitted !== null,
    originalLength: full.length,
  };
}

/** A media type as a marker or a passed item may carry it: type/subtype, nothing else. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}$/;
/** Standard base64, padded: what MCP's data and blob fields are (anything else is not passed on). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Which media items of one result pass whole (the caller asked and the service's media
 * setting is on): an image with an image/ type, audio with an audio/ type, a binary resource
 * with any type or none, each valid base64, together at most LIMITS.maxMediaBytes decoded;
 * anything else becomes the marker, as it does for every other caller.
 */
class MediaBudget {
  private left = LIMITS.maxMediaBytes;

  pass(item: CallToolResult['content'][number]): Content | null {
    if (item.type === 'image' || item.type === 'audio') {
      if (!MEDIA_TYPE.test(item.mimeType) || !item.mimeType.toLowerCase().startsWith(`${item.type}/`) || !this.take(item.data)) return null;
      return { type: item.type, mimeType: item.mimeType, data: item.data };
    }
    if (item.type === 'resource' && 'blob' in item.resource && typeof item.resource.blob === 'string') {
      const mimeType = item.resource.mimeType ?? null;
      if ((mimeType !== null && !MEDIA_TYPE.test(mimeType)) || !this.take(item.resource.blob)) return null;
      return { type: 'blob', uri: item.resource.uri, mimeType, blob: item.resource.blob };
    }
    return null;
  }

  private take(data: string): boolean {
    const bytes = base64Bytes(data) ?? 0;
    if (bytes > this.left || !BASE64.test(data)) return false;
    this.left -= bytes;
    return true;
  }
}

/** Ajv's errors in a line: where and what, the first few, cut (the paths are the server's keys: untrusted, shown as data). */
function schemaErrors(errors: ArgumentValidator['errors']): string {
  const parts = (errors ?? []).slice(0, 3).map((e) => `${e.instancePath === '' ? '(root)' : JSON.stringify(e.instancePath.slice(0, 100))} ${e.message ?? 'is invalid'}`);
  return parts.length === 0 ? 'it is invalid' : parts.join('; ');
}

/**
 * The result with its structured content checked against the tool's output schema (when
 * the tool has one that compiled): content that does not match is left out like content
 * over the cap (structuredOmitted says why), so no caller is given what the schema promises
 * and is not; the text stays. Checked as it is given (redacted, binaries as markers), so
 * what passes is exactly what callers get.
 */
export function checkStructured(result: NormalizedResult, validate: ArgumentValidator | null): NormalizedResult {
  if (validate === null || result.structuredContent === null || validate(result.structuredContent)) return result;
  const characters = JSON.stringify(result.structuredContent).length;
  const reason = `it does not match the tool's outputSchema: ${schemaErrors(validate.errors)}`.slice(0, 500);
  return { ...result, structuredContent: null, structuredOmitted: { characters, reason }, truncated: true };
}
