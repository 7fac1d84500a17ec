import type { FieldChange, PinnedDefinition, TextDiffPart } from '../core/index.js';
import { canonicalJson } from '../util/index.js';

/** Above this many token pairs, the differing middle of two texts is shown as removed, then added. */
const MAX_DIFF_CELLS = 2_000_000;

/** What a review shows of a held definition against its pin (none: it was added). */
export function pinDiff(pin: { readonly digest: string; readonly definition: PinnedDefinition } | undefined, definition: PinnedDefinition): { pin: 'added' | 'changed'; pinnedDigest: string | null; changes: FieldChange[]; descriptionDiff: TextDiffPart[] | null } {
  if (pin === undefined) return { pin: 'added', pinnedDigest: null, changes: [], descriptionDiff: null };
  const before = pin.definition;
  const descriptionDiff = before.description !== definition.description ? wordDiff(before.description ?? '', definition.description ?? '') : null;
  return { pin: 'changed', pinnedDigest: pin.digest, changes: fieldChanges(before, definition), descriptionDiff };
}

/**
 * Every leaf that differs between the pinned and the new definition, by JSON pointer:
 * objects key by key, arrays index by index; a side that lacks the key has no before (after).
 */
export function fieldChanges(before: PinnedDefinition, after: PinnedDefinition): FieldChange[] {
  const changes: FieldChange[] = [];
  walk(before, after, '', changes);
  return changes;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function walk(before: unknown, after: unknown, pointer: string, changes: FieldChange[]): void {
  if (canonicalJson(before) === canonicalJson(after)) return;
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    for (const key of keys) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      // Own keys only: `in` also sees inherited names (constructor, __proto__).
      if (!Object.hasOwn(after, key)) changes.push({ path: at, before: before[key] });
      else if (!Object.hasOwn(before, key)) changes.push({ path: at, after: after[key] });
      else walk(before[key], after[key], at, changes);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i >= after.length) changes.push({ path: `${pointer}/${i}`, before: before[i] });
      else if (i >= before.length) changes.push({ path: `${pointer}/${i}`, after: after[i] });
      else walk(before[i], after[i], `${pointer}/${i}`, changes);
    }
    return;
  }
  changes.push({ path: pointer === '' ? '/' : pointer, before, after });
}

/** A word diff (words and the whitespace between them) of two texts: runs kept, removed and added, in order. */
export function wordDiff(before: string, after: string): TextDiffPart[] {
  const a = tokens(before);
  const b = tokens(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const parts: TextDiffPart[] = [];
  push(parts, 'same', a.slice(0, start));
  middle(a.slice(start, endA), b.slice(start, endB), parts);
  push(parts, 'same', a.slice(endA));
  return parts;
}

function tokens(text: string): string[] {
  return text.split(/(\s+)/).filter((t) => t !== '');
}

function push(parts: TextDiffPart[], op: TextDiffPart['op'], words: readonly string[]): void {
  if (words.length === 0) return;
  const text = words.join('');
  const last = parts[parts.length - 1];
  if (last?.op === op) parts[parts.length - 1] = { op, text: last.text + text };
  else parts.push({ op, text });
}

/** The longest common subsequence of two token lists, walked into parts (or all removed, then all added, when too large). */
function middle(a: readonly string[], b: readonly string[], parts: TextDiffPart[]): void {
  if (a.length * b.length > MAX_DIFF_CELLS || a.length === 0 || b.length === 0) {
    push(parts, 'removed', a);
    push(parts, 'added', b);
    return;
  }
  const width = b.length + 1;
  // lengths[i * width + j]: the LCS of a[i..] and b[j..] (at most min(a, b) <= 1414 tokens, under 2^16).
  const lengths = new Uint16Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] = a[i] === b[j] ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push(parts, 'same', [a[i] as string]);
      i++;
      j++;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0)) {
      push(parts, 'removed', [a[i] as string]);
      i++;
    } else {
      push(parts, 'added', [b[j] as string]);
      j++;
    }
  }
  push(parts, 'removed', a.slice(i));
  push(parts, 'added', b.slice(j));
}
