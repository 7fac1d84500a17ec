/**
 * Renders docs/protocol.md and docs/errors.md from the protocol definition, so the
 * reference can never drift from the code (a test compares the files with this output).
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, EXIT } from '../errors.js';
import { LIMITS } from '../limits.js';
import * as wire from './protocol.js';

/** A code block longer than this on one line is broken over several. */
const LINE_WIDTH = 120;

/**
 * Every schema exported by the wire module, by export name: these are the shared shapes.
 * Found by iterating the module (protocol.ts re-exports every part), so a new export is
 * documented once and referenced everywhere without a list to keep.
 */
function exportedSchemas(): Map<string, object> {
  const found = new Map<string, object>();
  for (const [name, value] of Object.entries(wire)) {
    if (typeof value === 'object' && Kind in value) found.set(name, value);
  }
  return found;
}

/**
 * The name of the shared shape `node` is: the exported schema itself, or a copy of it
 * (TypeBox's Optional copies a schema to mark it, Omit and Pick clone the properties they
 * keep). A copy is recognised by its text only for a shape specific enough to mean the same
 * thing wherever it occurs (see specific()): a bare `{"minimum":1,"type":"integer"}` is not.
 */
function sharedNameOf(node: object, byIdentity: ReadonlyMap<object, string>, byText: ReadonlyMap<string, string>): string | undefined {
  return byIdentity.get(node) ?? byText.get(JSON.stringify(node));
}

/** A schema with a description, properties or alternatives: one equal to it in text is the same shape. */
function specific(schema: object): boolean {
  return ['description', 'properties', 'anyOf', 'oneOf', 'allOf'].some((key) => Object.hasOwn(schema, key));
}

/** Renders schemas as plain JSON with every shared shape (other than the root) replaced by a $ref. */
class SchemaRenderer {
  readonly shared = exportedSchemas();
  /** The shared shapes referenced so far: they get a section of their own. */
  readonly used = new Set<string>();
  private readonly byIdentity = new Map<object, string>();
  private readonly byText = new Map<string, string>();

  constructor() {
    for (const [name, schema] of this.shared) {
      if (!this.byIdentity.has(schema)) this.byIdentity.set(schema, name);
      const text = JSON.stringify(schema);
      if (specific(schema) && !this.byText.has(text)) this.byText.set(text, name);
    }
  }

  /** The shared shape `schema` is, if it is one. */
  nameOf(schema: TSchema): string | undefined {
    return sharedNameOf(schema, this.byIdentity, this.byText);
  }

  /** The schema as plain JSON (symbols dropped), shared shapes below the root referenced. */
  plain(value: unknown, root = true): unknown {
    if (Array.isArray(value)) return value.map((item: unknown) => this.plain(item, false));
    if (typeof value !== 'object' || value === null) return value;
    if (!root) {
      const name = sharedNameOf(value, this.byIdentity, this.byText);
      if (name !== undefined) {
        this.used.add(name);
        return { $ref: `#/components/schemas/${name}` };
      }
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.plain(item, false)]));
  }
}

/**
 * JSON, indented by two, with every object or array that fits in the line kept on one line
 * (`lead`: the columns already taken on the value's first line). An array of plain values
 * is never broken.
 */
function compactJson(value: unknown, indent = 0, lead = 0): string {
  const flat = JSON.stringify(value);
  if (typeof value !== 'object' || value === null || lead + flat.length <= LINE_WIDTH) return flat;
  const plainValues = Object.values(value).every((item) => typeof item !== 'object' || item === null);
  // A list of plain values is never broken; a schema of plain keywords only (a string with
  // its pattern and description) takes a longer line rather than five short ones.
  if (plainValues && (Array.isArray(value) || lead + flat.length <= 2 * LINE_WIDTH)) return flat;
  const pad = ' '.repeat(indent + 2);
  const items = Array.isArray(value)
    ? value.map((item: unknown) => `${pad}${compactJson(item, indent + 2, pad.length)}`)
    : Object.entries(value).map(([key, item]) => {
        const head = `${pad}${JSON.stringify(key)}: `;
        return `${head}${compactJson(item, indent + 2, head.length)}`;
      });
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${items.join(',\n')}\n${' '.repeat(indent)}${close}`;
}

function anchor(name: string): string {
  return `[${name}](#${name.toLowerCase()})`;
}

/** A schema as a titled block: a link when the schema is a shared shape, else its JSON and the shapes it refers to. */
function block(title: string, schema: TSchema, renderer: SchemaRenderer, root = false): string[] {
  const name = root ? undefined : renderer.nameOf(schema);
  if (name !== undefined) {
    renderer.used.add(name);
    return [`${title}: ${anchor(name)}.`, ''];
  }
  const seen = new Set<string>();
  const json = compactJson(renderer.plain(schema));
  for (const match of json.matchAll(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g)) seen.add(match[1] ?? '');
  const uses = seen.size === 0 ? '' : ` (uses ${[...seen].map(anchor).join(', ')})`;
  return [`${title}${uses}:`, '```json', json, '```', ''];
}

function isEmptyObject(schema: TSchema): boolean {
  return schema.type === 'object' && Object.keys((schema.properties ?? {}) as object).length === 0 && schema.additionalProperties === false;
}

export function renderProtocolMarkdown(): string {
  const renderer = new SchemaRenderer();
  const lines: string[] = [
    '# wispd control protocol',
    '',
    '<!-- Generated from src/core/wire/protocol.ts by `npm run docs`. Do not edit by hand. -->',
    '',
    'JSON-RPC 2.0 over a Unix domain socket, one JSON message per line (UTF-8, `\\n`-terminated).',
    `A line longer than ${LIMITS.maxControlFrameBytes} bytes is refused with \`FRAME_TOO_LARGE\` and that connection is closed.`,
    'Params are by name (an object). Batches are accepted. Responses may arrive in any order; match them by `id`.',
    'Every error carries a stable string code in `error.data.code` ([errors.md](errors.md)); application errors use JSON-RPC code -32000.',
    '`rpc.discover` returns this same definition as an OpenRPC document.',
    '',
    'MCP revisions: as a client of MCP servers, the daemon speaks 2025-11-25 (and the 2025 revisions a server picks at',
    '`initialize`) and 2026-07-28 (a server, over stdio or streamable HTTP, that refuses the 2025 handshake naming it); an active service\'s',
    '`connection.server.protocolVersion` says which one its connection speaks. The gateway (`wispctl mcp serve`) serves 2025 clients, and 2026-07-28 clients (over stdio and --http).',
    '',
    'Events are notifications `{"jsonrpc":"2.0","method":"event","params":{seq, type, at, ...}}`, sent only to',
    'connections that called `events.subscribe`. `seq` is monotonic within one daemon run (`runId`).',
    '',
    'Every named shape (a schema exported by src/core/wire/protocol.ts, under its export name) is written once, under',
    '[Shared shapes](#shared-shapes); a schema that contains it refers to it as `{"$ref": "#/components/schemas/<Name>"}`.',
    '',
    '## Methods',
    '',
  ];
  for (const [name, def] of Object.entries(wire.methods)) {
    lines.push(`### \`${name}\``, '', def.summary, '');
    lines.push(...(isEmptyObject(def.params) ? ['Params: none.', ''] : block('Params', def.params, renderer)), ...block('Result', def.result, renderer));
    if (def.errors.length > 0) lines.push(`Errors: ${def.errors.map((code) => `\`${code}\``).join(', ')}`, '');
  }
  lines.push('## Events', '');
  for (const [type, schema] of Object.entries(wire.events)) {
    lines.push(`### \`${type}\``, '', schema.description ?? '', '', ...block('Shape', schema, renderer));
  }
  lines.push('## Shared shapes', '');
  // A shared shape may refer to others: render until no new one appears, then in name order.
  const rendered = new Map<string, string[]>();
  for (let pending = [...renderer.used]; pending.length > 0; pending = [...renderer.used].filter((name) => !rendered.has(name))) {
    for (const name of pending) {
      const schema = renderer.shared.get(name) as TSchema;
      rendered.set(name, [`### ${name}`, '', ...(schema.description === undefined ? [] : [schema.description, '']), ...block('Schema', schema, renderer, true)]);
    }
  }
  for (const name of [...rendered.keys()].sort()) lines.push(...(rendered.get(name) ?? []));
  lines.push('## Limits', '', '| limit | value |', '|---|---|');
  for (const [name, value] of Object.entries(LIMITS)) lines.push(`| \`${name}\` | ${value} |`);
  lines.push('');
  return lines.join('\n');
}

export function renderErrorsMarkdown(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from src/core/error-catalog.ts by `npm run docs`. Do not edit by hand. -->',
    '',
    'Every error that crosses the control socket carries one of these codes in `error.data.code`.',
    'Codes are stable: new ones may be added, none is renamed or removed. `wispctl` exits with the status shown.',
    '',
    '| code | JSON-RPC code | wispctl exit | meaning |',
    '|---|---|---|---|',
  ];
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    lines.push(`| \`${code}\` | ${entry.rpcCode} | ${entry.exit} | ${entry.description.replace(/\|/g, '\\|')} |`);
  }
  lines.push('', '## wispctl exit statuses', '', '| status | meaning |', '|---|---|');
  const meaning: Record<keyof typeof EXIT, string> = {
    ok: 'success',
    failure: 'a failure not listed below',
    usage: 'bad usage or invalid input',
    noDaemon: 'no daemon answers on the socket',
    notFound: 'the named thing does not exist',
    conflict: 'conflict: name taken, edited meanwhile, already running',
    limit: 'a documented limit was reached',
    refused: 'refused: the daemon is stopping, or a directory is unsafe',
  };
  for (const [key, status] of Object.entries(EXIT)) lines.push(`| ${status} | ${meaning[key as keyof typeof EXIT]} |`);
  lines.push('');
  return lines.join('\n');
}
