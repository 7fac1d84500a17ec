import { ERROR_CATALOG, JSONRPC_INTERNAL_ERROR, type ErrorCode } from '../core/index.js';

/**
 * JSON-RPC messages as the server writes them: error bodies, and serialising under a guard
 * (what cannot be serialised, or would be larger than the frame cap, is refused, never thrown).
 */

/** Longest id we echo back (a longer one is INVALID_REQUEST): an error reply must always fit a frame. */
export const MAX_ID_CHARS = 256;

export type Id = string | number | null;
export interface ErrorBody {
  code: number;
  message: string;
  data: { code: ErrorCode } & Record<string, unknown>;
}
export type Response = { jsonrpc: '2.0'; id: Id; result: unknown } | { jsonrpc: '2.0'; id: Id; error: ErrorBody };

export function errorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { code: ERROR_CATALOG[code].rpcCode, message, data: { ...details, code } };
}

export function internalError(): ErrorBody {
  return { code: JSONRPC_INTERNAL_ERROR, message: 'internal error (see the daemon log)', data: { code: 'INTERNAL_ERROR' } };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return isRecord(value) && typeof value.then === 'function';
}

/** Cuts a client-supplied string for an error message. */
export function excerpt(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

/** `spent`: about how many bytes of work a refusal cost (at most the limit it was given). */
/** `tooLarge`: refused for its size (a value that cannot be serialised at all is not). */
export type Encoded = { ok: true; text: string; bytes: number } | { ok: false; reason: string; spent: number; tooLarge: boolean };

class OverLimit extends Error {}

/** A result serialised once and reused (a method whose result never changes: see MethodEntry.staticResult). */
export class PreSerialized {
  constructor(
    readonly text: string,
    readonly bytes: number,
  ) {}
}

/**
 * The result of a method whose results are bounded by construction (MethodTraits.boundedResult):
 * serialised by plain JSON.stringify, its size checked after (see encodeResponse).
 */
export class BoundedResult {
  constructor(readonly value: unknown) {}
}

/**
 * A result serialised when its frame is written, with the turn's other frames
 * (MethodTraits.deferredResult). `value` is what a result would be (a BoundedResult for a
 * bounded method). A batch's answers are serialised at once, as before.
 */
export class DeferredResult {
  constructor(readonly value: unknown) {}
}

/**
 * JSON.stringify under a guard: a value that throws (a cycle, a BigInt, a string too long
 * for V8, nesting too deep) or whose text is over `maxBytes` is refused, never thrown. A
 * lower bound of the text's length is kept as it is built, and serialising stops once it
 * passes `maxBytes`: refusing a value of any size costs about `maxBytes` of work.
 */
export function encode(message: unknown, maxBytes: number): Encoded {
  let atLeast = -3; // the root is visited under the key "" of a wrapper object
  let visited = 0; // what was serialised before stopping: the work spent
  let text: string | undefined;
  try {
    text = JSON.stringify(message, function (this: unknown, key: string, value: unknown): unknown {
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return value;
      visited = atLeast;
      atLeast += (typeof value === 'string' ? value.length + 2 : 1) + (Array.isArray(this) ? 0 : key.length + 3);
      if (atLeast > maxBytes) throw new OverLimit();
      return value;
    });
  } catch (error) {
    if (error instanceof OverLimit) return { ok: false, reason: `it is over the ${maxBytes}-byte frame limit`, spent: Math.max(0, visited), tooLarge: true };
    return { ok: false, reason: `it could not be serialised (${error instanceof Error ? error.message : String(error)})`, spent: Math.max(0, atLeast), tooLarge: false };
  }
  return measured(text, maxBytes);
}

/** What JSON.stringify gave, refused when it is no text (undefined for a function or symbol) or over `maxBytes`. */
function measured(text: unknown, maxBytes: number): Encoded {
  if (typeof text !== 'string') return { ok: false, reason: 'it could not be serialised', spent: 0, tooLarge: false };
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) return { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit`, spent: bytes, tooLarge: true };
  return { ok: true, text, bytes };
}

/** A notification around params already serialised, checked against the cap (the parts are measured flat: cheaper). */
export function frameOf(head: string, params: string, maxBytes: number): Encoded {
  const bytes = Buffer.byteLength(head) + Buffer.byteLength(params) + 1;
  if (bytes > maxBytes) return { ok: false, reason: `it is ${bytes} bytes, over the ${maxBytes}-byte frame limit`, spent: 0, tooLarge: true };
  return { ok: true, text: `${head}${params}}`, bytes };
}

/** A response's text, unless it cannot be serialised or is over `max` bytes; a PreSerialized result is spliced in. */
export function encodeResponse(response: Response, max: number): Encoded {
  if ('result' in response && response.result instanceof PreSerialized) {
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":`;
    const bytes = Buffer.byteLength(head) + response.result.bytes + 1;
    if (bytes > max) return { ok: false, reason: `it is ${bytes} bytes, over the ${max}-byte frame limit`, spent: 0, tooLarge: true };
    return { ok: true, text: `${head}${response.result.text}}`, bytes };
  }
  if ('result' in response && response.result instanceof BoundedResult) return encodeBounded({ jsonrpc: '2.0', id: response.id, result: response.result.value }, max);
  return encode(response, max);
}

/**
 * A message known to be bounded, serialised without the guard's count of every value (which
 * keeps JSON.stringify off its fast path: a tool call's answer took 2.0 us instead of 0.8 in a
 * loop on Node 20, an approval's more); what cannot be serialised or is over `maxBytes` is still refused, never thrown.
 */
function encodeBounded(message: unknown, maxBytes: number): Encoded {
  let text: unknown;
  try {
    text = JSON.stringify(message);
  } catch (error) {
    return { ok: false, reason: `it could not be serialised (${error instanceof Error ? error.message : String(error)})`, spent: 0, tooLarge: false };
  }
  return measured(text, maxBytes);
}
