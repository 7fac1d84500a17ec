import { describe, expect, it } from 'vitest';
import { FrameGuard, type Refusal } from '../../../src/gateway/frame-guard.js';

/** Issue 33: the gateway's stdin, measured line by line before the SDK parses a line. */
function run(chunks: string[], limits = { maxNesting: 4, maxBytes: 64 }): Promise<{ passed: string; refused: Refusal[] }> {
  const refused: Refusal[] = [];
  const guard = new FrameGuard((r) => refused.push(r), limits);
  let passed = '';
  guard.on('data', (chunk: Buffer) => (passed += chunk.toString()));
  return new Promise((resolve) => {
    guard.on('end', () => resolve({ passed, refused }));
    for (const chunk of chunks) guard.write(Buffer.from(chunk));
    guard.end();
  });
}

describe('FrameGuard', () => {
  it('passes lines as they came, however the chunks cut them', async () => {
    const { passed, refused } = await run(['{"a":[1', ',2]}\n{"b"', ':"[[[[[[["}\n', '\n']);
    expect(passed).toBe('{"a":[1,2]}\n{"b":"[[[[[[["}\n\n');
    expect(refused).toEqual([]);
  });

  it('refuses a line nested too deep, even when its depth is reached across chunks, and the next line passes', async () => {
    const { passed, refused } = await run(['[[[', '[[1]]]', ']]\n[1]\n']);
    expect(passed).toBe('[1]\n');
    expect(refused).toEqual([{ code: -32600, message: 'the message nests deeper than 4 levels; it was not parsed', data: { limit: 'maxFrameNesting', max: 4 } }]);
  });

  it('refuses a line over the byte cap without holding it, and the next line passes', async () => {
    const { passed, refused } = await run([`"${'x'.repeat(40)}`, `${'x'.repeat(40)}"\n`, '{}\n']);
    expect(passed).toBe('{}\n');
    expect(refused.map((r) => r.data)).toEqual([{ limit: 'maxMessageBytes', max: 64 }]);
  });
});
