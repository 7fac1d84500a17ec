import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clean, cleanLines, jsonForTerminal, unseenIn } from '../../../src/core/index.js';

/**
 * The one escaping of untrusted text (src/core/visible-text.ts), shared by wispctl, the MCP
 * gateway and the web panel (bundled into it). clean, cleanLines and jsonForTerminal are
 * tested as wispctl uses them in test/unit/cli/render.test.ts; here, what the panel adds:
 * the count behind its warning on an approval card.
 */

const SECRET = 'exfil:AKIA';
const TAGS = Array.from(SECRET, (ch) => String.fromCodePoint(0xe0000 + (ch.codePointAt(0) ?? 0))).join('');

describe('unseenIn: what a value holds that would not be seen as it is', () => {
  it('counts tag characters (and what they spell), zero-width and controls apart from bidi controls, in keys and nested values', () => {
    expect(unseenIn({ text: `See you at 5${TAGS}` })).toEqual({ hidden: SECRET.length, bidi: 0, spelled: SECRET });
    expect(unseenIn({ file: 'invoice_\u202efdp.exe\u202c', [`k\u2066`]: ['\u200b', { deep: '\u001b[2J\u200f' }] })).toEqual({ hidden: 2, bidi: 4, spelled: '' });
    // A tag character outside printable ASCII counts, and spells nothing.
    expect(unseenIn('\u{e0001}\u{e007f}')).toEqual({ hidden: 2, bidi: 0, spelled: '' });
  });

  it('counts nothing in plain text, numbers or JSON\'s own line breaks and tabs', () => {
    expect(unseenIn({ a: 'See you at 5', b: [1, true, null], c: 'line\nnext\ttab\r\n', 漢: 'é 😀' })).toEqual({ hidden: 0, bidi: 0, spelled: '' });
    expect(unseenIn(undefined)).toEqual({ hidden: 0, bidi: 0, spelled: '' });
  });

  it('counts exactly what clean() escapes in a value\'s strings, LF, CR and TAB aside', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const { hidden, bidi } = unseenIn({ text });
        const escaped = Array.from(text).filter((ch) => !'\n\r\t'.includes(ch) && clean(ch) !== ch).length;
        expect(hidden + bidi).toBe(escaped);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('one escaping for a page and a terminal', () => {
  it('a page\'s text (cleanLines, joined) and JSON (jsonForTerminal) hold nothing hidden, and say where it was', () => {
    const shown = cleanLines(`See you at 5${TAGS}\r\nline \u202eevil\u202c`).join('\n');
    expect(shown).toBe(`See you at 5${Array.from(SECRET, (ch) => `\\u{e00${(ch.codePointAt(0) ?? 0).toString(16)}}`).join('')}\nline \\u202eevil\\u202c`);
    expect(jsonForTerminal({ text: `5${Array.from(TAGS).slice(0, 2).join('')}` }, 2)).toBe('{\n  "text": "5\\udb40\\udc65\\udb40\\udc78"\n}');
  });
});
