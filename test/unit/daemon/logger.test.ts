import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/daemon/index.js';
import { Redactor } from '../../../src/secrets/index.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('createLogger', () => {
  it('writes JSON lines at the chosen level, with known secret values redacted', () => {
    const redactor = new Redactor();
    const out = capture();
    const logger = createLogger({ level: 'info', pretty: false, redactor, destination: out.stream });
    redactor.hold('test', 'API_TOKEN', 'tok-"7f3a"');
    logger.info({ env: 'API_TOKEN=tok-"7f3a"' }, 'starting with tok-"7f3a"');
    logger.debug({}, 'hidden at info');
    const lines = out.text().trim().split('\n');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? '{}') as { level: number; msg: string; env: string };
    expect(line).toMatchObject({ level: 30, msg: 'starting with [REDACTED:API_TOKEN]', env: 'API_TOKEN=[REDACTED:API_TOKEN]' });
    expect(out.text()).not.toContain('7f3a');
  });
});
