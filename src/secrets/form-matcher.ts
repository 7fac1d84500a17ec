/**
 * Finds every occurrence of many fixed strings (the forms of the known secrets, a few hundred
 * of them) in one pass over a text: a rolling hash of the last WINDOW characters (each step
 * shifts the hash 5 bits and keeps 30, so a character leaves it after WINDOW steps by
 * itself), looked up in a 64 Kbit filter and then a table of the patterns' first WINDOW
 * characters; each candidate is checked in full.
 *
 * Why not one `includes` per form, as before: the cost grows with the number of forms (20
 * secrets with their base64 and percent forms are about 300 of them), and every reply and
 * event is searched. This pass costs hardly more for 300 forms than for 3 (filter hits and
 * checks are rare in text that holds no secret). Why not a regular
 * expression: an alternation of hundreds of literals backtracks through each of them at every
 * position.
 *
 * Linear time: a text made to hit the filter at every position (a periodic secret, a periodic
 * text) would make the checks cost (text length) x (pattern length). The checks are counted,
 * and past CHECK_BUDGET times the text's length the search starts again with one native
 * search (`indexOf`, linear in V8) per pattern: never worse than searching form by form.
 */
export const WINDOW = 6;
const CHECK_BUDGET = 8;
const FILTER_BITS = 16;
const HASH_MASK = 0x3fffffff;
/** Spreads the hash over the filter (the golden-ratio multiplier). */
const SPREAD = 0x9e3779b1;

export interface FormPattern {
  readonly text: string;
  /** Which value it is a form of. */
  readonly owner: number;
  /** Which text it is matched in: the text as it is, or with its `%xx` upper-cased. */
  readonly kind: 'exact' | 'percent';
}

export interface Span {
  readonly start: number;
  readonly end: number;
  readonly owner: number;
}

export class FormMatcher {
  private readonly filter = new Uint8Array(1 << (FILTER_BITS - 3));
  private readonly byHash = new Map<number, number[]>();
  readonly hasPercent: boolean;

  /** Every pattern must be at least WINDOW characters long. */
  constructor(private readonly patterns: readonly FormPattern[]) {
    patterns.forEach((pattern, index) => {
      if (pattern.text.length < WINDOW) throw new Error(`a form shorter than ${WINDOW} characters`);
      const h = windowHash(pattern.text, 0);
      const key = Math.imul(h, SPREAD) >>> (32 - FILTER_BITS);
      this.filter[key >>> 3] = (this.filter[key >>> 3] ?? 0) | (1 << (key & 7));
      const list = this.byHash.get(h);
      if (list === undefined) this.byHash.set(h, [index]);
      else list.push(index);
    });
    this.hasPercent = patterns.some((p) => p.kind === 'percent');
  }

  /**
   * The occurrences in `text` of the patterns of `kind` ('all': both), in order of start
   * (longest first at the same start). `first`: stop at the first one (a yes/no question).
   */
  find(text: string, kind: FormPattern['kind'] | 'all', first = false): Span[] {
    const spans: Span[] = [];
    if (this.patterns.length === 0 || text.length < WINDOW) return spans;
    const wanted = (p: FormPattern): boolean => kind === 'all' || p.kind === kind;
    let budget = CHECK_BUDGET * text.length + 1024;
    for (let i = nextHit(text, this.filter, WINDOW - 1); i !== -1; i = nextHit(text, this.filter, i + 1)) {
      const start = i - WINDOW + 1;
      const candidates = this.byHash.get(windowHash(text, start));
      if (candidates === undefined) continue;
      for (const index of candidates) {
        const pattern = this.patterns[index];
        if (pattern === undefined || !wanted(pattern)) continue;
        budget -= pattern.text.length;
        if (budget < 0) return this.findEach(text, wanted, first);
        if (text.startsWith(pattern.text, start)) {
          spans.push({ start, end: start + pattern.text.length, owner: pattern.owner });
          if (first) return spans;
        }
      }
    }
    return spans.sort(byStart);
  }

  /** The same, one native search per pattern (each linear): the bound when the checks cost too much. */
  private findEach(text: string, wanted: (p: FormPattern) => boolean, first: boolean): Span[] {
    const spans: Span[] = [];
    for (const pattern of this.patterns) {
      if (!wanted(pattern)) continue;
      // Copies that do not overlap, as split() finds them: an overlapping one is inside the union anyway.
      for (let at = text.indexOf(pattern.text); at !== -1; at = text.indexOf(pattern.text, at + pattern.text.length)) {
        spans.push({ start: at, end: at + pattern.text.length, owner: pattern.owner });
        if (first) return spans;
      }
    }
    return spans.sort(byStart);
  }
}

/** The hash of the WINDOW characters from `start`. */
function windowHash(text: string, start: number): number {
  let h = 0;
  for (let i = start; i < start + WINDOW; i++) h = ((h << 5) + text.charCodeAt(i)) & HASH_MASK;
  return h;
}

/**
 * The first `i` from `from` on where the window ending at `i` passes the filter; -1 if none.
 * The hot loop, kept apart and small so that V8 optimises it the same way every time.
 */
function nextHit(text: string, filter: Uint8Array, from: number): number {
  let h = 0;
  for (let i = from - WINDOW + 1; i < from; i++) h = ((h << 5) + text.charCodeAt(i)) & HASH_MASK;
  const length = text.length;
  for (let i = from; i < length; i++) {
    h = ((h << 5) + text.charCodeAt(i)) & HASH_MASK;
    const key = Math.imul(h, SPREAD) >>> (32 - FILTER_BITS);
    if (((filter[key >>> 3] ?? 0) & (1 << (key & 7))) !== 0) return i;
  }
  return -1;
}

function byStart(a: Span, b: Span): number {
  return a.start - b.start || b.end - a.end;
}
