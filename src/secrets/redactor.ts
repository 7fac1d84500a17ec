import { formsOf, upperPercent } from './encoded-forms.js';
import { FormMatcher, WINDOW, type FormPattern, type Span } from './form-matcher.js';

/**
 * Replaces known secret values with `[REDACTED:NAME]`. Fed by the secret store (and the
 * model key, OAuth secrets, values `${VAR}` takes from the daemon's environment) as values
 * become known; applied where strings leave the daemon: socket replies and events, log
 * lines, audit records, transcripts, model requests, tool results and stderr tails.
 *
 * Each value is looked for in every form encoded-forms.ts lists: itself, JSON-escaped,
 * percent-encoded in any case, and base64 (alone or inside a larger blob). One pass over the
 * text finds every form of every value (form-matcher.ts); where copies overlap, their union is
 * redacted, so no piece of either is left.
 *
 * Values are counted by holder (`service:<id>/<variable>`, `model`, ...): a value stays
 * redacted while any holder still holds it, so deleting one service's copy never
 * unredacts another's.
 *
 * Values shorter than MIN_SECRET_CHARS are not looked for: everything is redacted, object
 * keys included, so a variable such as `DEBUG=1` or `LEVEL=info` would otherwise rewrite
 * every reply; a value that short cannot be told from ordinary text and is no secret.
 */
export const MIN_SECRET_CHARS = WINDOW;

interface HeldValue {
  readonly marker: string;
  readonly value: string;
}

/** What the held values compile to; rebuilt when they change. */
interface Compiled {
  /** The distinct values, longest first; a span's owner is an index here. */
  readonly values: readonly HeldValue[];
  /** Every form, for text as it is. */
  readonly text: FormMatcher;
  /** Every form as it appears inside a JSON string; null when some form holds a surrogate (escaped differently alone). */
  readonly json: FormMatcher | null;
}

export class Redactor {
  /** holder -> what it holds. */
  private readonly holders = new Map<string, { readonly name: string; readonly value: string }>();
  private compiled: Compiled | undefined;
  private readonly releasing: (() => void)[] = [];

  /**
   * `listener` runs before a value may stop being redacted (let go, or replaced): text made
   * later would show it. What serialises lazily (the event hub) serialises what it holds then.
   */
  beforeRelease(listener: () => void): void {
    this.releasing.push(listener);
  }

  /** `holder` now holds `value` (replacing what it held before). An empty value holds nothing. */
  hold(holder: string, name: string, value: string): void {
    const before = this.holders.get(holder);
    if (value === '') {
      this.release(holder);
      return;
    }
    if (before?.value === value && before.name === name) return;
    if (before !== undefined) this.notifyRelease();
    this.holders.set(holder, { name, value });
    this.compiled = undefined;
  }

  /** `holder` no longer holds a value; the value stays redacted while another holder has it. */
  release(holder: string): void {
    if (!this.holders.has(holder)) return;
    this.notifyRelease();
    this.holders.delete(holder);
    this.compiled = undefined;
  }

  /** `holder` and every holder under it (`holder/...`) let go. */
  releaseAll(holder: string): void {
    for (const key of [...this.holders.keys()]) if (key === holder || key.startsWith(`${holder}/`)) this.release(key);
  }

  private notifyRelease(): void {
    for (const listener of this.releasing) listener();
  }

  /** How many distinct values are redacted. */
  get size(): number {
    return this.values().length;
  }

  redact(text: string): string {
    const compiled = this.compile();
    if (compiled.values.length === 0 || text.length < MIN_SECRET_CHARS) return text;
    const spans = spansIn(text, compiled.text, false);
    return spans.length === 0 ? text : replaceSpans(text, spans, compiled.values);
  }

  /**
   * A text that was cut from a longer one: besides whole values, a piece of a value at a
   * cut edge (its end at the `start`, its beginning at the `end`; 4 characters or more)
   * is redacted too, so no cut ever shows a part of a secret.
   */
  redactEdges(text: string, edges: { start?: boolean; end?: boolean }): string {
    let out = this.redact(text);
    const values = this.values();
    if (values.length === 0) return out;
    for (const { marker, value } of values) {
      if (edges.start === true) {
        for (let k = Math.min(value.length - 1, out.length); k >= Math.min(4, value.length - 1) && k > 0; k--) {
          if (out.startsWith(value.slice(value.length - k))) {
            out = `${marker}${out.slice(k)}`;
            break;
          }
        }
      }
      if (edges.end === true) {
        for (let k = Math.min(value.length - 1, out.length); k >= Math.min(4, value.length - 1) && k > 0; k--) {
          if (out.endsWith(value.slice(0, k))) {
            out = `${out.slice(0, out.length - k)}${marker}`;
            break;
          }
        }
      }
    }
    return out;
  }

  /**
   * Any JSON value with every string redacted, object keys included. Iterative, so a
   * value nested deeper than the stack is no problem. Only plain objects and arrays are
   * descended into; the input is not changed.
   */
  redactValue<T>(value: T): T {
    if (this.values().length === 0 || this.absentFrom(value)) return value;
    return this.walk(value);
  }

  /**
   * The JSON text of `value` with every known value redacted, and the value as redacted.
   * Serialised once in the common case: the text itself is searched (see `clean`), and only
   * when a value may occur is `value` walked and serialised again. Every reply, event and
   * audit record is serialised anyway; checking that text, not a second serialisation of
   * its own, halves what redaction costs them. Throws what JSON.stringify throws.
   */
  redactedJson<T>(value: T): { value: T; text: string | undefined } {
    const text: unknown = JSON.stringify(value); // undefined for undefined, a function or a symbol
    if (typeof text !== 'string') return { value, text: undefined };
    if (this.clean(text)) return { value, text };
    const redacted = this.walk(value);
    return { value: redacted, text: JSON.stringify(redacted) };
  }

  /**
   * Whether no known value can occur in any string of the value this is the JSON text of
   * (JSON escapes each character on its own, so a string that holds a form holds it escaped
   * in the text). False means unsure: walk the value.
   */
  clean(text: string): boolean {
    const { values, json } = this.compile();
    if (values.length === 0) return true;
    if (json === null) return false;
    return spansIn(text, json, true).length === 0;
  }

  /**
   * Whether no value can occur in any string of `value`, told from its JSON text: JSON
   * escapes each character on its own, so a string that holds a form holds it escaped in the
   * text. One serialisation and a few searches, against a walk that costs about 10 us for an
   * event when any secret is held (and every reply and event passes here). Unsure (a cycle,
   * a form with a surrogate) means walk.
   */
  private absentFrom(value: unknown): boolean {
    if (this.compile().json === null) return false;
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      return false;
    }
    if (typeof text !== 'string') return typeof value !== 'object' || value === null;
    return this.clean(text);
  }

  private walk<T>(value: T): T {
    let root: unknown;
    const stack: { from: unknown; set: (v: unknown) => void }[] = [{ from: value, set: (v) => (root = v) }];
    for (let job = stack.pop(); job !== undefined; job = stack.pop()) {
      const { from, set } = job;
      if (typeof from === 'string') set(this.redact(from));
      else if (Array.isArray(from)) {
        const out: unknown[] = new Array<unknown>(from.length);
        set(out);
        from.forEach((item, i) => stack.push({ from: item, set: (v) => (out[i] = v) }));
      } else if (isPlainObject(from)) {
        const out: Record<string, unknown> = {};
        set(out);
        for (const [key, item] of Object.entries(from)) {
          const redactedKey = this.redact(key);
          // defineProperty: a "__proto__" key stays an own property, as JSON.parse makes it.
          Object.defineProperty(out, redactedKey, { value: undefined, enumerable: true, writable: true, configurable: true });
          stack.push({ from: item, set: (v) => (out[redactedKey] = v) });
        }
      } else set(from);
    }
    return root as T;
  }

  private values(): readonly HeldValue[] {
    return this.compile().values;
  }

  private compile(): Compiled {
    if (this.compiled !== undefined) return this.compiled;
    const byValue = new Map<string, string>();
    for (const { name, value } of this.holders.values()) if (value.length >= MIN_SECRET_CHARS && !byValue.has(value)) byValue.set(value, name);
    const values = [...byValue.entries()].sort((a, b) => b[0].length - a[0].length).map(([value, name]) => ({ marker: `[REDACTED:${name}]`, value }));
    const text: FormPattern[] = [];
    const json: FormPattern[] = [];
    values.forEach(({ value }, owner) => {
      const { exact, percent } = formsOf(value);
      for (const form of exact) {
        text.push({ text: form, owner, kind: 'exact' });
        // JSON escapes each character on its own, so a string holding a form holds it escaped in JSON text.
        json.push({ text: JSON.stringify(form).slice(1, -1), owner, kind: 'exact' });
      }
      // Percent forms hold only characters JSON leaves as they are.
      for (const form of percent) for (const into of [text, json]) into.push({ text: form, owner, kind: 'percent' });
    });
    const surrogate = text.some((p) => /[\uD800-\uDFFF]/.test(p.text));
    this.compiled = { values, text: new FormMatcher(text), json: surrogate ? null : new FormMatcher(json) };
    return this.compiled;
  }
}

/**
 * Where the forms occur in `text`: the exact ones as it is, the percent ones with its `%xx`
 * upper-cased (one search when that changes nothing). `first`: any one will do.
 */
function spansIn(text: string, matcher: FormMatcher, first: boolean): Span[] {
  const upper = matcher.hasPercent ? upperPercent(text) : text;
  if (upper === text) return matcher.find(text, 'all', first);
  const exact = matcher.find(text, 'exact', first);
  if (first && exact.length > 0) return exact;
  return [...exact, ...matcher.find(upper, 'percent', first)].sort((a, b) => a.start - b.start || b.end - a.end);
}

/**
 * `text` with each span replaced by its value's marker. Overlapping spans are redacted as
 * their union: one inside another adds nothing, one that reaches further adds its marker
 * (unless it is the same).
 */
function replaceSpans(text: string, spans: readonly Span[], values: readonly HeldValue[]): string {
  let out = '';
  let at = 0;
  let marker = '';
  for (const span of spans) {
    if (span.end <= at) continue;
    const next = values[span.owner]?.marker ?? '[REDACTED]';
    if (span.start >= at) out += text.slice(at, span.start) + next;
    else if (next !== marker) out += next;
    marker = next;
    at = span.end;
  }
  return out + text.slice(at);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
