/**
 * Untrusted text made visible: the one sanitizer every front-end uses before it shows a
 * server's or a client's text to a human (wispctl, src/cli/render.ts, which says what it
 * escapes and why; the MCP gateway's approval prompt; the web panel's pages, which import
 * this module through core's door and are bundled with it by scripts/bundle-ui.js), so that
 * all of them escape the very same code points. Pure: no I/O, no node: module (it runs in
 * the browser too).
 */

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;
/** Bidirectional controls: embeddings, overrides, isolates and marks (they reorder how text reads). */
const BIDI = /^[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function escapeCodePoint(ch: string): string {
  switch (ch) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
  }
  const cp = ch.codePointAt(0) ?? 0;
  if (cp <= 0xff) return `\\x${hex(cp, 2)}`;
  if (cp <= 0xffff) return `\\u${hex(cp, 4)}`;
  return `\\u{${hex(cp, 5)}}`;
}

/** A one-line field: every unsafe code point, LF and TAB included, shown as an escape. */
export function clean(text: string): string {
  return text.replace(UNSAFE, escapeCodePoint);
}

/** Multi-line text: one cleaned string per line (LF and CRLF end a line; a lone CR is shown). */
export function cleanLines(text: string): string[] {
  return text.split(/\r?\n/).map(clean);
}

/** Exact JSON for a terminal: unsafe code points inside strings become JSON `\uXXXX` escapes. */
export function jsonForTerminal(value: unknown, space?: number): string {
  const json = (JSON.stringify(value, null, space) as string | undefined) ?? 'null';
  return json.replace(UNSAFE, (ch) => {
    if (ch === '\n') return ch; // only the indentation's own line breaks: JSON escapes those in strings
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${hex(ch.charCodeAt(i), 4)}`;
    return out;
  });
}

/** What a value holds that a page or a terminal would not show as it is. */
export interface Unseen {
  /** Code points clean() escapes, other than LF, CR, TAB and the bidi controls: invisible (tags, zero-width, fillers...) or controls. */
  readonly hidden: number;
  /** Bidirectional controls (U+202A..U+202E, U+2066..U+2069, LRM, RLM, ALM). */
  readonly bidi: number;
  /** What its Unicode tag characters (U+E0000..U+E007F) spell, printable ASCII only: each mirrors an ASCII character. */
  readonly spelled: string;
}

/** Counts, in every string of `value` (object keys included, at any depth), what would be hidden or reordered if shown raw. */
export function unseenIn(value: unknown): Unseen {
  let hidden = 0;
  let bidi = 0;
  let spelled = '';
  const visit = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      for (const [ch] of v.matchAll(UNSAFE)) {
        if (ch === '\n' || ch === '\r' || ch === '\t') continue;
        if (BIDI.test(ch)) bidi++;
        else hidden++;
        const cp = ch.codePointAt(0) ?? 0;
        if (cp >= 0xe0020 && cp <= 0xe007e) spelled += String.fromCharCode(cp - 0xe0000);
      }
    } else if (v !== null && typeof v === 'object' && depth < 64) {
      for (const [k, item] of Object.entries(v)) {
        visit(k, depth + 1);
        visit(item, depth + 1);
      }
    }
  };
  visit(value, 0);
  return { hidden, bidi, spelled };
}
