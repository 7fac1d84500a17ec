import type { PinnedDefinition, ToolWarning } from '../core/index.js';

/** At most this many warnings per tool (a schema may have many strings). */
const MAX_WARNINGS = 20;
/** Hidden text decoded from tag characters is quoted up to this many characters. */
const MAX_QUOTED = 120;

const TAGS = /[\u{E0000}-\u{E007F}]/gu;
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u180E]/gu;
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/gu;

/** Another service's tool, as a definition might name it. */
export interface OtherTool {
  readonly serviceName: string;
  readonly name: string;
  readonly modelName: string;
}

/**
 * Facts about a definition's text that a human should see before trusting it: invisible or
 * direction-changing characters (Unicode tag characters, zero-width characters, bidi
 * controls), and names of other services' tools. Facts, not a verdict: each says where and what.
 */
export function toolWarnings(definition: PinnedDefinition, others: readonly OtherTool[]): ToolWarning[] {
  const warnings: ToolWarning[] = [];
  for (const [field, text] of strings(definition, '')) {
    if (warnings.length >= MAX_WARNINGS) break;
    warnings.push(...hiddenText(field, text), ...namedTools(field, text, definition.name, others));
  }
  return warnings.slice(0, MAX_WARNINGS);
}

function hiddenText(field: string, text: string): ToolWarning[] {
  const found: ToolWarning[] = [];
  const tags = text.match(TAGS);
  if (tags !== null) {
    // Tag characters mirror ASCII (U+E0041 is an invisible "A"): what they spell is shown.
    const spelled = tags.map((ch) => String.fromCodePoint((ch.codePointAt(0) ?? 0) - 0xe0000)).join('').replace(/[^\x20-\x7e]/g, '');
    const quoted = spelled.length > MAX_QUOTED ? `${spelled.slice(0, MAX_QUOTED)}...` : spelled;
    found.push({ kind: 'tag_characters', field, message: `${field} has ${tags.length} invisible Unicode tag characters${quoted !== '' ? `, spelling ${JSON.stringify(quoted)}` : ''}` });
  }
  const zero = text.match(ZERO_WIDTH);
  if (zero !== null) found.push({ kind: 'zero_width', field, message: `${field} has ${zero.length} zero-width characters (invisible)` });
  const bidi = text.match(BIDI);
  if (bidi !== null) found.push({ kind: 'bidi_control', field, message: `${field} has ${bidi.length} bidirectional control characters (they can reorder how the text reads)` });
  return found;
}

function namedTools(field: string, text: string, own: string, others: readonly OtherTool[]): ToolWarning[] {
  const found: ToolWarning[] = [];
  for (const other of others) {
    const hit = [other.name, other.modelName].find((name) => name !== own && name.length >= 3 && containsToken(text, name));
    if (hit !== undefined) found.push({ kind: 'names_other_tool', field, message: `${field} names ${JSON.stringify(hit)}, a tool of the service ${other.serviceName}` });
  }
  return found;
}

/** `name` occurs in `text` with no name character right before or after it. */
function containsToken(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at !== -1; at = text.indexOf(name, at + 1)) {
    const before = at === 0 ? '' : text.charAt(at - 1);
    const after = text.charAt(at + name.length);
    if (!/[\w-]/.test(before) && !/[\w-]/.test(after)) return true;
  }
  return false;
}

/** Every string of a JSON value (object keys too), with the JSON pointer of where it is. */
function* strings(value: unknown, pointer: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [pointer === '' ? '/' : pointer, value];
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* strings(item, `${pointer}/${i}`);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      yield [at, key];
      yield* strings(item, at);
    }
  }
}
