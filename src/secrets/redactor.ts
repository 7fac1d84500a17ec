/**
 * Replaces known secret values with `[REDACTED:NAME]`. Fed by the secret store (and the
 * model key, OAuth secrets, values `${VAR}` takes from the daemon's environment) as values
 * become known; applied where strings leave the daemon: socket replies and events, log
 * lines, audit records, transcripts, model requests, tool results and stderr tails.
 *
 * Values are counted by holder (`service:<id>/<variable>`, `model`, ...): a value stays
 * redacted while any holder still holds it, so deleting one service's copy never
 * unredacts another's.
 *
 * Values shorter than MIN_SECRET_CHARS are not looked for: everything is redacted, object
 * keys included, so a variable such as `DEBUG=1` or `LEVEL=info` would otherwise rewrite
 * every reply; a value that short cannot be told from ordinary text and is no secret.
 */
export const MIN_SECRET_CHARS = 6;

export class Redactor {
  /** holder -> what it holds. */
  private readonly holders = new Map<string, { readonly name: string; readonly value: string }>();
  /** The distinct values, longest first, each with every form it is looked for in; rebuilt on change. */
  private ordered: { readonly marker: string; readonly forms: readonly string[]; readonly value: string }[] | undefined = [];
  /** The forms as JSON escapes them (see absentFrom); rebuilt with `ordered`. */
  private escaped: readonly string[] | null | undefined;
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
    this.ordered = undefined;
    this.escaped = undefined;
  }

  /** `holder` no longer holds a value; the value stays redacted while another holder has it. */
  release(holder: string): void {
    if (!this.holders.has(holder)) return;
    this.notifyRelease();
    this.holders.delete(holder);
    this.ordered = undefined;
    this.escaped = undefined;
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
    const values = this.values();
    if (values.length === 0 || text === '') return text;
    let out = text;
    for (const { marker, forms } of values) {
      for (const form of forms) if (out.includes(form)) out = out.split(form).join(marker);
    }
    return out;
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
    if (this.values().length === 0) return true;
    const escaped = this.escapedForms();
    if (escaped === null) return false;
    for (const form of escaped) if (text.includes(form)) return false;
    return true;
  }

  /**
   * Whether no value can occur in any string of `value`, told from its JSON text: JSON
   * escapes each character on its own, so a string that holds a form holds it escaped in the
   * text. One serialisation and a few searches, against a walk that costs about 10 us for an
   * event when any secret is held (and every reply and event passes here). Unsure (a cycle,
   * a form with a surrogate) means walk.
   */
  private absentFrom(value: unknown): boolean {
    const escaped = this.escapedForms();
    if (escaped === null) return false;
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      return false;
    }
    if (typeof text !== 'string') return typeof value !== 'object' || value === null;
    return this.clean(text);
  }

  /** Every form, as it appears inside a JSON string; null when some form holds a surrogate (escaped differently alone). */
  private escapedForms(): readonly string[] | null {
    if (this.escaped !== undefined) return this.escaped;
    const forms = this.values().flatMap((v) => v.forms);
    this.escaped = forms.some((form) => /[\uD800-\uDFFF]/.test(form)) ? null : forms.map((form) => JSON.stringify(form).slice(1, -1));
    return this.escaped;
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

  private values(): readonly { readonly marker: string; readonly forms: readonly string[]; readonly value: string }[] {
    if (this.ordered !== undefined) return this.ordered;
    const byValue = new Map<string, string>();
    for (const { name, value } of this.holders.values()) if (value.length >= MIN_SECRET_CHARS && !byValue.has(value)) byValue.set(value, name);
    // Longest first, so a value that contains another is replaced whole.
    this.ordered = [...byValue.entries()]
      .sort((a, b) => b[0].length - a[0].length)
      .map(([value, name]) => {
        // In JSON text (log lines, messages) the value may appear escaped; in a URI, percent-encoded.
        const forms = new Set([value, JSON.stringify(value).slice(1, -1), uriForm(value)]);
        return { marker: `[REDACTED:${name}]`, forms: [...forms].filter((f) => f !== ''), value };
      });
    return this.ordered;
  }
}

/** The value percent-encoded as in a URI; '' (no such form) for one that cannot be (a lone surrogate: encodeURIComponent throws). */
function uriForm(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
