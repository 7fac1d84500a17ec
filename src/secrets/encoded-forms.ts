/**
 * The forms a known secret value is looked for in, besides itself: how a server (or any
 * text the daemon passes on) can show the same secret without showing its characters.
 *
 * - exact forms, matched as they are: the value, its JSON escape, and its base64 forms;
 * - percent forms, matched whatever the case of the hex digits in each `%XX` (the text is
 *   searched once more with every `%xx` upper-cased, see `upperPercent`).
 *
 * Base64 (standard `+/` and URL-safe `-_` alphabets, padded and unpadded): the value's UTF-8
 * encoded alone, and the three alignment-shifted cores. A secret inside a larger encoded blob
 * (`Authorization: Basic base64(user:secret)`, a JSON document encoded whole) starts at byte
 * 0, 1 or 2 of a 3-byte group; for each alignment the core is the run of base64 characters
 * that depends on the secret's bytes alone. The one or two characters at each end of a core
 * mix the secret's bits with its neighbours' and are not redacted: at most 4 bits of the
 * secret each. The base64 of the value's upper-case percent encoding (what OAuth's
 * client_secret_basic sends) is looked for the same way.
 *
 * Hex (lower- and upper-case) of the value's UTF-8: a secret inside a larger hex dump starts
 * at a byte, so its two characters a byte are a run of the dump as they are.
 *
 * A derived form shorter than MIN_DERIVED_CHARS is not used: a short run of base64
 * characters can occur in ordinary text by chance, and redacting it would rewrite text that
 * holds no secret. So base64 covers a value of 9 bytes or more encoded alone, and of 10 or
 * more inside a larger blob. A value longer than MAX_DERIVED_SOURCE_CHARS (a hostile token
 * endpoint can hand over a megabyte) is looked for only as itself, JSON-escaped and through
 * encodeURIComponent (in any case): each further form would cost its length again in memory.
 */
export const MIN_DERIVED_CHARS = 12;
export const MAX_DERIVED_SOURCE_CHARS = 8192;

export interface ValueForms {
  /** Matched as they are, in the text as it is. */
  readonly exact: readonly string[];
  /** Percent-encoded forms with upper-case hex digits, matched in the text with its `%xx` upper-cased. */
  readonly percent: readonly string[];
}

/** Every form of `value` (see the module comment); each form at least as long as the shorter of the value and MIN_DERIVED_CHARS. */
export function formsOf(value: string): ValueForms {
  const json = JSON.stringify(value).slice(1, -1);
  const uri = tryEncode(encodeURIComponent, value);
  const exact = new Set<string>([value, json]);
  const percent = new Set<string>();
  // One equal to the value has no %XX to vary in case: the value itself covers it.
  if (uri !== '' && uri !== value) percent.add(uri);
  if (value.length <= MAX_DERIVED_SOURCE_CHARS) {
    for (const form of [tryEncode(encodeURI, value), formEncoded(value)]) if (form !== '' && form !== value) percent.add(form);
    for (const form of [...percent]) {
      // A `%` (or `%` and a hex digit) just before a form that starts with hex digits makes a
      // triple of them that the text's upper-casing changes: look for those spellings too.
      if (/^[0-9A-Fa-f]/.test(form)) percent.add(form.slice(0, 1).toUpperCase() + form.slice(1));
      if (/^[0-9A-Fa-f]{2}/.test(form)) percent.add(form.slice(0, 2).toUpperCase() + form.slice(2));
    }
    const bytes = Buffer.from(value, 'utf8');
    for (const form of base64Forms(bytes)) exact.add(form);
    const hex = bytes.toString('hex');
    if (hex.length >= MIN_DERIVED_CHARS) exact.add(hex).add(hex.toUpperCase());
    if (uri !== '' && uri !== value) for (const form of base64Forms(Buffer.from(uri, 'utf8'))) exact.add(form);
  }
  return { exact: [...exact], percent: [...percent] };
}

/** `text` with the hex digits of every `%xx` upper-cased (same length, same positions); `text` itself when there is none. */
export function upperPercent(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(/%(?:[a-f][0-9A-Fa-f]|[0-9A-F][a-f])/g, (triple) => triple.toUpperCase());
}

/** Base64 of `bytes` alone (padded, unpadded) and its three alignment cores, in both alphabets; only those of MIN_DERIVED_CHARS or more. */
export function base64Forms(bytes: Buffer): string[] {
  const standard: string[] = [];
  const alone = bytes.toString('base64');
  standard.push(alone, alone.replace(/=+$/, ''));
  for (let shift = 0; shift < 3; shift++) {
    // Character j covers bits [6j, 6j+6) of the stream; the secret's bits are [8*shift, 8*(shift+len)).
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const first = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    standard.push(encoded.slice(first, end));
  }
  const forms = new Set<string>();
  for (const form of standard) {
    // Padding is no part of the secret: it does not count towards the length.
    if (form.replace(/=+$/, '').length < MIN_DERIVED_CHARS) continue;
    forms.add(form);
    forms.add(form.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
}

/** As `application/x-www-form-urlencoded` writes it (URLSearchParams, HTML forms): space as `+`. */
function formEncoded(value: string): string {
  return tryEncode((v) => new URLSearchParams([['', v]]).toString().slice(1), value);
}

/** '' (no such form) for a value that cannot be encoded (a lone surrogate: encodeURIComponent throws). */
function tryEncode(encode: (value: string) => string, value: string): string {
  try {
    return encode(value);
  } catch {
    return '';
  }
}
