import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/secrets/index.js';

describe('Redactor', () => {
  it('replaces every known value, raw or JSON-escaped, with its name', () => {
    const redactor = new Redactor();
    redactor.hold('a', 'API_KEY', 'sk-"quoted"\\x');
    redactor.hold('b', 'TOKEN', 'tok123');
    const line = JSON.stringify({ msg: 'key sk-"quoted"\\x and tok123 twice tok123' });
    expect(redactor.redact(line)).toBe(JSON.stringify({ msg: 'key [REDACTED:API_KEY] and [REDACTED:TOKEN] twice [REDACTED:TOKEN]' }));
    expect(redactor.redact('plain sk-"quoted"\\x')).toBe('plain [REDACTED:API_KEY]');
  });

  it('replaces a longer value before a value it contains', () => {
    const redactor = new Redactor();
    redactor.hold('a', 'SHORT', 'abcdef');
    redactor.hold('b', 'LONG', 'abcdefghi');
    expect(redactor.redact('abcdefghi abcdef')).toBe('[REDACTED:LONG] [REDACTED:SHORT]');
  });

  it('forgets released values, and ignores values too short to tell from ordinary text', () => {
    const redactor = new Redactor();
    redactor.hold('e', 'EMPTY', '');
    redactor.hold('s', 'DEBUG', '1');
    redactor.hold('i', 'LEVEL', 'info');
    redactor.hold('k', 'K', 'value-1');
    expect(redactor.size).toBe(1);
    expect(redactor.redactValue({ info: 'debug 1 info', task: 'value-1' })).toEqual({ info: 'debug 1 info', task: '[REDACTED:K]' });
    redactor.release('k');
    expect(redactor.size).toBe(0);
    expect(redactor.redact('value-1')).toBe('value-1');
  });

  it('keeps a value redacted while any holder still holds it', () => {
    const redactor = new Redactor();
    redactor.hold('service:a/session/TOKEN', 'TOKEN', 'same-value-123');
    redactor.hold('service:b/session/TOKEN', 'TOKEN', 'same-value-123');
    redactor.release('service:a/session/TOKEN');
    expect(redactor.redact('x same-value-123')).toBe('x [REDACTED:TOKEN]');
    redactor.releaseAll('service:b');
    expect(redactor.redact('x same-value-123')).toBe('x same-value-123');
  });

  it('a holder that takes a new value lets the old one go', () => {
    const redactor = new Redactor();
    redactor.hold('h', 'K', 'old-value');
    redactor.hold('h', 'K', 'new-value');
    expect(redactor.redact('old-value new-value')).toBe('old-value [REDACTED:K]');
  });

  it('redacts every string of a JSON value, keys too, however deep, without changing the input', () => {
    const redactor = new Redactor();
    redactor.hold('h', 'K', 'sekrit-42');
    const input = { a: ['x sekrit-42', 1, null, true], 'sekrit-42': { uri: 'file:///sekrit-42' }, ['__proto__']: 'sekrit-42' };
    const out = redactor.redactValue(input);
    expect(JSON.stringify(out)).toBe(JSON.stringify({ a: ['x [REDACTED:K]', 1, null, true], '[REDACTED:K]': { uri: 'file:///[REDACTED:K]' }, ['__proto__']: '[REDACTED:K]' }));
    expect(input.a[0]).toBe('x sekrit-42');
    let deep: unknown = 'sekrit-42';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let probe = redactor.redactValue(deep);
    for (let i = 0; i < 100_000; i++) probe = (probe as unknown[])[0];
    expect(probe).toBe('[REDACTED:K]');
  });

  it('redacts a percent-encoded value (a secret in a URI)', () => {
    const redactor = new Redactor();
    redactor.hold('h', 'K', 'a b/c?d');
    expect(redactor.redact('https://x/?q=a%20b%2Fc%3Fd')).toBe('https://x/?q=[REDACTED:K]');
  });

  it('at a cut edge, a piece of a value is redacted too', () => {
    const redactor = new Redactor();
    redactor.hold('h', 'K', 'ABCDEFGHIJ');
    expect(redactor.redactEdges('text then ABCDEF', { end: true })).toBe('text then [REDACTED:K]');
    expect(redactor.redactEdges('GHIJ and text', { start: true })).toBe('[REDACTED:K] and text');
    expect(redactor.redactEdges('GHIJ and text', { end: true })).toBe('GHIJ and text');
  });
});

describe('Redactor.redactValue, told from the JSON text first', () => {
  /** The walk alone, as every value went before the text was looked at. */
  function walked(redactor: Redactor, value: unknown): unknown {
    return (redactor as unknown as { walk: (v: unknown) => unknown }).walk(value);
  }

  it('gives what the walk gives, for any value and any held secrets (escaped characters and keys included)', () => {
    const secret = fc.string({ minLength: 6, maxLength: 12, unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\u0001', '/', '%', ' ', 'é'), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })) });
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 3 }), fc.jsonValue(), fc.nat(), (secrets, base, pick) => {
        const redactor = new Redactor();
        secrets.forEach((value, i) => redactor.hold(`h${i}`, `S${i}`, value));
        const chosen = secrets[pick % secrets.length] ?? '';
        // Now and then a secret planted in a string and in a key.
        const value = pick % 3 === 0 ? { wrap: base, [`k${chosen}`]: [`x${chosen}y`] } : base;
        expect(redactor.redactValue(value)).toEqual(walked(redactor, value));
        // Serialised once and searched: the same text as the walked value's.
        expect(redactor.redactedJson(value).text).toBe(JSON.stringify(walked(redactor, value)));
      }),
      { numRuns: 500 },
    );
  });

  it('returns a value holding no secret as it is, and redacts one that holds a secret escaped in its text', () => {
    const redactor = new Redactor();
    redactor.hold('h', 'TOKEN', 'quote"and\\slash');
    const clean = { a: ['nothing here'], b: { c: 1 } };
    expect(redactor.redactValue(clean)).toBe(clean);
    expect(redactor.redactValue({ [`key quote"and\\slash`]: 'v quote"and\\slash' })).toEqual({ 'key [REDACTED:TOKEN]': 'v [REDACTED:TOKEN]' });
  });
});

describe('Redactor, held values that cannot be percent-encoded', () => {
  it('a value with a lone surrogate (say a hostile token endpoint\'s) is redacted, and nothing throws', () => {
    const redactor = new Redactor();
    const value = 'tok-\ud800-secret';
    redactor.hold('oauth:x/access_token', 'ACCESS_TOKEN', value);
    expect(redactor.redact(`a ${value} b`)).toBe('a [REDACTED:ACCESS_TOKEN] b');
    expect(redactor.redactValue({ [value]: [value] })).toEqual({ '[REDACTED:ACCESS_TOKEN]': ['[REDACTED:ACCESS_TOKEN]'] });
    expect(redactor.redactedJson({ t: `x${value}` }).text).toBe('{"t":"x[REDACTED:ACCESS_TOKEN]"}');
    expect(redactor.clean('{"t":"nothing"}')).toBe(false); // unsure with a surrogate: the value is walked
  });
});
