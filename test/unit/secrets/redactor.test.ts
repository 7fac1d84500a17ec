import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/secrets/index.js';

describe('Redactor', () => {
  it('replaces every known value, raw or JSON-escaped, with its name', () => {
    const redactor = new Redactor();
    redactor.add('API_KEY', 'sk-"quoted"\\x');
    redactor.add('TOKEN', 'tok123');
    const line = JSON.stringify({ msg: 'key sk-"quoted"\\x and tok123 twice tok123' });
    expect(redactor.redact(line)).toBe(JSON.stringify({ msg: 'key [REDACTED:API_KEY] and [REDACTED:TOKEN] twice [REDACTED:TOKEN]' }));
    expect(redactor.redact('plain sk-"quoted"\\x')).toBe('plain [REDACTED:API_KEY]');
  });

  it('replaces a longer value before a value it contains', () => {
    const redactor = new Redactor();
    redactor.add('SHORT', 'abc');
    redactor.add('LONG', 'abcdef');
    expect(redactor.redact('abcdef abc')).toBe('[REDACTED:LONG] [REDACTED:SHORT]');
  });

  it('forgets removed values and ignores empty ones', () => {
    const redactor = new Redactor();
    redactor.add('EMPTY', '');
    redactor.add('K', 'v1');
    redactor.remove('v1');
    expect(redactor.size).toBe(0);
    expect(redactor.redact('v1')).toBe('v1');
  });
});
