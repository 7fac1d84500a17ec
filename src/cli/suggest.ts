/**
 * The close name to a mistyped one, for "did you mean ...?": commands (usage.ts) and service
 * names (context.ts). Commander has its own suggestion code but does not export it
 * (lib/suggestSimilar.js is internal), so this is a small edit distance of our own.
 */

/** Edit distance (Levenshtein). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The closest name (at most two edits away, or one the word starts), if there is one. */
export function closest(word: string, names: readonly string[]): string | undefined {
  const scored = names.map((name) => ({ name, d: name.startsWith(word) && word.length >= 2 ? 0.5 : distance(word, name) }));
  const best = scored.filter((s) => s.d <= Math.min(2, word.length - 1)).sort((x, y) => x.d - y.d)[0];
  return best?.name;
}
