import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../../src/util/index.js';

describe('digests', () => {
  it('sha256Hex gives the standard SHA-256 of text and of bytes', () => {
    // FIPS 180-2's test vector for "abc", and the empty input.
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(sha256Hex('abc'));
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    // Text is hashed as UTF-8.
    expect(sha256Hex('é')).toBe(sha256Hex(Buffer.from('é', 'utf8')));
  });

  it('canonicalJson gives equal text for equal values, whatever their key order, and keeps a "__proto__" key', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
    const parsed: unknown = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"a":2}');
  });
});
