import { WispError, type Service, type ToolInfo } from '../../core/index.js';
import { parseJson } from '../args.js';
import { clean, showArg } from '../render.js';

/**
 * `mcp call NAME TOOL key=value ...`: each value typed by the tool's input schema (from the
 * server: untrusted, read only for the types of its properties). Strings are taken as they
 * are; numbers, integers, booleans, null, arrays and objects are parsed; a key the schema
 * does not name is refused here, before any approval is asked for. The daemon checks the
 * whole object against the schema again before it asks.
 */

type Schema = Record<string, unknown>;

const TYPE_WORDS: Readonly<Record<string, string>> = {
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
  array: 'a JSON array',
  object: 'a JSON object',
};

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** Whether the words are one JSON object (the form before key=value). */
export function isJsonForm(words: readonly string[]): boolean {
  return words.length === 1 && (words[0] ?? '').trimStart().startsWith('{');
}

/** The arguments as a JSON object, from `{...}`: the daemon checks them against the schema. */
export function jsonArguments(text: string): Record<string, unknown> {
  const args = parseJson(text, 'arguments');
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new WispError('INVALID_PARAMS', 'arguments must be a JSON object');
  return args as Record<string, unknown>;
}

/** The message for a tool that is not in the catalog, in the daemon's own words (TOOL_NOT_FOUND names the tool). */
export function toolNotFoundMessage(service: Service, toolName: string): string {
  const status = service.connection.status;
  if (status !== 'active') return `${clean(service.name)} is not active (${status}): activate it with wispctl mcp activate ${showArg(service.name)}`;
  return `${clean(service.name)} has no tool named ${clean(JSON.stringify(toolName))} (wispctl mcp tools ${showArg(service.name)} lists its tools)`;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON types a property accepts: its type(s), those of anyOf/oneOf branches, of its enum or const values. */
export function typesOf(schema: unknown): Set<string> {
  const types = new Set<string>();
  if (!isSchema(schema)) return types;
  const type = schema.type;
  if (typeof type === 'string') types.add(type);
  if (Array.isArray(type)) for (const t of type) if (typeof t === 'string') types.add(t);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const branch of branches) for (const t of typesOf(branch)) types.add(t);
  }
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : [];
  for (const v of values as unknown[]) types.add(v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  return types;
}

/** One value by the types its property accepts: the first non-string type it parses as, else a string if one is accepted. */
export function typedValue(key: string, text: string, types: ReadonlySet<string>): unknown {
  if (types.size === 0) {
    // No type to go by: JSON where it is JSON, else the text.
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if ((types.has('integer') || types.has('number')) && JSON_NUMBER.test(text)) {
    const n = Number(text);
    if (types.has('number') || Number.isSafeInteger(n)) return n;
  }
  if (types.has('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  if (types.has('null') && text === 'null') return null;
  for (const kind of ['array', 'object'] as const) {
    if (!types.has(kind)) continue;
    const parsed = tryJson(text);
    if (kind === 'array' ? Array.isArray(parsed) : isSchema(parsed)) return parsed;
  }
  if (types.has('string')) return text;
  const wanted = [...types].sort().map((t) => TYPE_WORDS[t] ?? clean(t)).join(' or ');
  throw new WispError('INVALID_ARGUMENTS', `${clean(key)} must be ${wanted}, not ${showArg(text)}`, { key });
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** key=value words, typed by the tool's input schema; unknown or repeated keys are refused. */
export function keyValueArguments(tool: Pick<ToolInfo, 'name' | 'inputSchema'>, words: readonly string[]): Record<string, unknown> {
  const input: Schema = tool.inputSchema;
  const properties = isSchema(input.properties) ? input.properties : {};
  const known = Object.keys(properties);
  // No prototype: a schema may name a property __proto__, which must stay an own key.
  const args = Object.create(null) as Record<string, unknown>;
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new WispError('INVALID_PARAMS', `${showArg(word)} is not key=value (or give the arguments as one JSON object)`);
    const key = word.slice(0, eq);
    if (!Object.hasOwn(properties, key)) {
      const list = known.length === 0 ? `${clean(tool.name)} takes no named arguments` : `it takes ${known.map((k) => clean(k)).join(', ')}`;
      throw new WispError('INVALID_ARGUMENTS', `${clean(tool.name)} has no argument ${showArg(key)}: ${list} (nothing was asked or sent)`, { key });
    }
    if (Object.hasOwn(args, key)) throw new WispError('INVALID_PARAMS', `${showArg(key)} is given twice`);
    args[key] = typedValue(key, word.slice(eq + 1), typesOf(properties[key]));
  }
  return args;
}
