/**
 * Written here, not taken from a library: the few lines that blank comments outside strings
 * are all JSONC needs, and jsonc-parser's tolerant parse would accept text we must refuse.
 */

/**
 * JSON with comments (VS Code's mcp.json may have them): `//` and `/* *\/` comments outside
 * strings are blanked, and a comma before `}` or `]` (outside strings) is dropped. Plain JSON
 * passes unchanged, strings included.
 */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      i = commentEnd(text, i);
    } else if (ch === ',' && /[}\]]/.test(text[significant(text, i + 1)] ?? '')) {
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** Just past the string that opens at `i` (or the end of the text). */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return Math.min(j + 1, text.length);
}

/** Just past the comment that opens at `i`. */
function commentEnd(text: string, i: number): number {
  if (text[i + 1] === '/') {
    const end = text.indexOf('\n', i);
    return end === -1 ? text.length : end;
  }
  const end = text.indexOf('*/', i + 2);
  return end === -1 ? text.length : end + 2;
}

/** The index of the next character from `i` that is neither white space nor inside a comment. */
function significant(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    if (/\s/.test(text[j] ?? '')) j++;
    else if (text[j] === '/' && (text[j + 1] === '/' || text[j + 1] === '*')) j = commentEnd(text, j);
    else return j;
  }
  return j;
}

/** JSON.parse of JSON with comments (VS Code's files): the same errors for text that is not JSON once its comments are gone. */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripJsonComments(text)) as unknown;
}
