import { describe, expect, it } from 'vitest';
import { normalizeResult } from '../../../src/mcp/result.js';
import { forModel } from '../../../src/sessions/replies.js';

const same = <T>(value: T): T => value;
const png = Buffer.alloc(600, 7).toString('base64');

describe('normalizeResult: structured content', () => {
  it('replaces binaries at any depth with markers and keeps everything else, a "__proto__" key as a key', () => {
    const structured = JSON.parse(
      JSON.stringify({ a: [{ b: { blob: 'AAAA', mimeType: 'application/pdf' } }], url: `data:;base64,${png}`, text: 'plain words, not base64', __proto__x: 1 }).replace('__proto__x', '__proto__'),
    ) as Record<string, unknown>;
    const result = normalizeResult({ content: [], structuredContent: { ...structured, long: png } }, same);
    expect(result.structuredContent).toEqual(
      JSON.parse(
        JSON.stringify({
          a: [{ b: { blob: '[omitted by Wisp: blob application/pdf, 3 bytes]', mimeType: 'application/pdf' } }],
          url: '[omitted by Wisp: data URI, 600 bytes]',
          text: 'plain words, not base64',
          __proto__x: 1,
          long: '[omitted by Wisp: binary, 600 bytes]',
        }).replace('__proto__x', '__proto__'),
      ),
    );
    expect(Object.getPrototypeOf(result.structuredContent)).toBe(Object.prototype);
    expect(result.truncated).toBe(false);
  });

  it('caps by the JSON after the markers: exactly at the cap it is given, one over it is left out with the flag; the model is told', () => {
    const at = (n: number) => normalizeResult({ content: [], structuredContent: { s: 'a b '.repeat(n) } }, same, 4 * 100 + 8);
    expect(at(100)).toMatchObject({ structuredContent: { s: 'a b '.repeat(100) }, structuredOmitted: null, truncated: false });
    const over = normalizeResult({ content: [], structuredContent: { s: `${'a b '.repeat(100)}!` } }, same, 408);
    expect(over).toMatchObject({ structuredContent: null, structuredOmitted: { characters: 409 }, truncated: true, originalLength: 0 });
    const withImage = normalizeResult({ content: [], structuredContent: { s: png.repeat(2) } }, same, 100);
    expect(withImage).toMatchObject({ structuredContent: { s: '[omitted by Wisp: binary, 1200 bytes]' }, structuredOmitted: null });
    const reply = forModel({ ...over, callId: 'c', approvalId: 'a', durationMs: 0, waitedMs: 0 });
    expect(reply).toBe('[structured content omitted: its JSON is 409 characters, over the 408-character cap]');
  });
});

describe('normalizeResult: a value nesting past the transports\' bound', () => {
  it('walks structured content 6,000 levels deep without a RangeError: past 512 levels a marker stands for the rest', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 6000; i++) deep = [deep];
    const result = normalizeResult({ content: [], structuredContent: { x: deep } }, same);
    let at: unknown = (result.structuredContent as { x: unknown }).x;
    let levels = 1;
    while (Array.isArray(at)) {
      at = at[0];
      levels += 1;
    }
    expect(at).toBe('[omitted by Wisp: nested more than 512 levels deep]');
    expect(levels).toBe(512);
  });
});
