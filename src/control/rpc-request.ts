import type { ErrorObject, ValidateFunction } from 'ajv';
import { PATTERN_WORDS, type ErrorCode } from '../core/index.js';
import { nestsDeeperThan } from '../util/index.js';
import { errorBody, excerpt, isRecord, MAX_ID_CHARS, type Id, type Response } from './rpc-frame.js';
import type { MethodEntry } from './rpc-types.js';

/**
 * The checks a message passes before any handler runs: the JSON-RPC envelope, the method,
 * the params' nesting depth (before anything looks into them) and their schema.
 */

/** Schema failures listed in an INVALID_PARAMS reply. */
const MAX_REPORTED_ERRORS = 16;

/** A request that passed every check: its handler may run. */
export interface CheckedRequest {
  readonly id: Id;
  readonly isNotification: boolean;
  readonly method: string;
  readonly entry: MethodEntry;
  readonly params: Record<string, unknown>;
}

/** Either the request, or what to answer instead (undefined: a notification, answered with nothing). */
export type RequestCheck = { ok: true; request: CheckedRequest } | { ok: false; response: Response | undefined };

export interface RequestRules {
  readonly methods: Readonly<Record<string, MethodEntry>>;
  readonly validators: { get(method: string): ValidateFunction | undefined };
  readonly maxDepth: number;
}

function describeAjvErrors(errors: ErrorObject[] | null | undefined): { path: string; message: string }[] {
  return (errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((error) => {
    const extra =
      error.keyword === 'additionalProperties'
        ? `: ${String((error.params as { additionalProperty?: unknown }).additionalProperty)}`
        : error.keyword === 'enum' || error.keyword === 'const'
          ? ` (${JSON.stringify(error.params)})`
          : '';
    const path = error.instancePath === '' ? '/' : error.instancePath;
    // Our patterns in words: a regular expression tells a user little.
    if (error.keyword === 'pattern') return { path, message: PATTERN_WORDS[String((error.params as { pattern?: unknown }).pattern)] ?? 'has a form not allowed here' };
    return { path, message: `${error.message ?? 'invalid'}${extra}` };
  });
}

/** The id to answer with: the request's own, if it is one we may echo. */
export function replyId(message: unknown): Id {
  return isRecord(message) && (typeof message.id === 'number' || (typeof message.id === 'string' && message.id.length <= MAX_ID_CHARS)) ? message.id : null;
}

export function failure(id: Id, code: ErrorCode, text: string, details?: Record<string, unknown>): Response {
  return { jsonrpc: '2.0', id, error: errorBody(code, text, details) };
}

type Envelope = { ok: true; id: Id; isNotification: boolean; method: string; params: object | undefined } | { ok: false; response: Response };

/** The JSON-RPC 2.0 envelope: an object, a usable id, jsonrpc "2.0", a method name, params an object or array. */
function readEnvelope(message: unknown): Envelope {
  if (!isRecord(message)) return { ok: false, response: failure(null, 'INVALID_REQUEST', 'a request must be a JSON object') };
  const hasId = Object.hasOwn(message, 'id');
  const rawId = message.id;
  const idValid =
    rawId === null || (typeof rawId === 'string' && rawId.length <= MAX_ID_CHARS) || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: Id = hasId && idValid ? rawId : null;
  const refuse = (text: string): Envelope => ({ ok: false, response: failure(id, 'INVALID_REQUEST', text) });
  if (hasId && !idValid) return refuse(`id must be a string (at most ${MAX_ID_CHARS} characters), a number or null`);
  if (message.jsonrpc !== '2.0') return refuse('jsonrpc must be "2.0"');
  if (typeof message.method !== 'string') return refuse('method must be a string');
  const params = message.params;
  if (params !== undefined && (typeof params !== 'object' || params === null)) return refuse('params must be an object or an array');
  return { ok: true, id, isNotification: !hasId, method: message.method, params };
}

/** Checks a parsed message against the envelope rules, the method table, the depth limit and the method's schema. */
export function checkRequest(message: unknown, rules: RequestRules): RequestCheck {
  const envelope = readEnvelope(message);
  if (!envelope.ok) return envelope;
  const { id, isNotification, method, params } = envelope;
  const refuse = (code: ErrorCode, text: string, details?: Record<string, unknown>): RequestCheck => ({
    ok: false,
    response: isNotification ? undefined : failure(id, code, text, details),
  });
  const entry = Object.hasOwn(rules.methods, method) ? rules.methods[method] : undefined;
  const validate = rules.validators.get(method);
  if (entry === undefined || validate === undefined) return refuse('METHOD_NOT_FOUND', `no method named ${JSON.stringify(excerpt(method))}`);
  if (Array.isArray(params)) return refuse('INVALID_PARAMS', 'params must be an object (by-name)');
  const byName = (params ?? {}) as Record<string, unknown>;
  // Before anything looks into the params (schema checks, handlers, redaction, digests):
  // nothing downstream recurses deeper than this.
  for (const [name, value] of Object.entries(byName)) {
    if (nestsDeeperThan(value, rules.maxDepth)) {
      return refuse(entry.tooDeep ?? 'INVALID_PARAMS', `${JSON.stringify(excerpt(name))} nests deeper than ${rules.maxDepth} levels`, {
        limit: 'maxArgumentDepth',
        max: rules.maxDepth,
        path: `/${excerpt(name)}`,
      });
    }
  }
  if (!validate(byName)) {
    const errors = describeAjvErrors(validate.errors);
    const summary = errors.map((e) => `${e.path} ${e.message}`).join('; ');
    return refuse('INVALID_PARAMS', `invalid params for ${method}: ${summary}`, { errors });
  }
  return { ok: true, request: { id, isNotification, method, entry, params: byName } };
}
