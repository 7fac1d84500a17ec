/**
 * Untrusted text made visible: the sanitizer of src/cli/render.ts (see there for what it
 * escapes and why), here so that every front-end that shows a server's or a client's text to
 * a human (the CLI, the MCP gateway's approval prompt) escapes the very same code points.
 * Pure: no I/O.
 */

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

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

