import { describe, expect, it } from 'vitest';
import { isPlainValue } from '../../../src/mcp/env-rules.js';

describe('isPlainValue: which values written in an entry\'s env are no secrets', () => {
  it('takes paths, numbers and one-word settings under a name that names no secret for plain', () => {
    for (const [name, value] of [
      ['ROOT_DIR', '/home/me/notes'],
      ['ALLOWED', '~/docs/work'],
      ['DATA', './data'],
      ['LOG_LEVEL', 'debug'],
      ['NODE_ENV', 'production'],
      ['PORT', '8080'],
      ['RATIO', '0.5'],
      ['LOCALE', 'en-US'],
    ]) {
      expect(isPlainValue(name as string, value as string), `${name}=${value}`).toBe(true);
    }
  });

  it('keeps as a secret any value under a secret\'s name, and any value that is not plainly a path or a setting', () => {
    for (const [name, value] of [
      ['API_KEY', 'production'],
      ['GITHUB_TOKEN', '/not/a/path'],
      ['DB_PASSWORD', 'hunter'],
      ['SESSION_DIR', '/tmp/x'],
      ['PRIVATE_PATH', '/home/me'],
      ['ENDPOINT', 'https://user:pw@example.com/'],
      ['DB', 'postgres://me:pw@db/x'],
      ['VALUE', 'sk-abc123def456'],
      ['VALUE', 'ghp_abcdefABCDEF0123456789'],
      ['CONFIG', '/home/me/with space'],
      ['CONFIG', '/home/me:/other'],
      ['WORD', 'a'.repeat(65)],
      ['VALUE', 'ghp_abcdefABCDEFghijkl'],
      ['VALUE', 'xKqPzRtYwVbN'],
    ]) {
      expect(isPlainValue(name as string, value as string), `${name}=${value}`).toBe(false);
    }
  });
});
