import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = new URL('../../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+'([^']+)'/g)].map((m) => m[1] ?? '');
}

describe('layering', () => {
  it('keeps wispctl away from the daemon: src/cli imports only the control client and protocol', () => {
    const allowed = new Set(['../control/client.js', '../control/protocol.js']);
    for (const file of files(path.join(src, 'cli'))) {
      for (const spec of imports(file)) {
        if (spec.startsWith('.')) {
          expect(spec.startsWith('./') || allowed.has(spec), `${path.relative(src, file)} imports ${spec}`).toBe(true);
        } else {
          expect(['ajv', 'pino', 'pino-pretty', '@modelcontextprotocol/sdk', '@sinclair/typebox'].some((p) => spec === p || spec.startsWith(`${p}/`)), `${path.relative(src, file)} imports ${spec}`).toBe(false);
        }
      }
    }
  });

  it('areas use each other only through their index.ts door', () => {
    for (const file of files(src)) {
      const area = path.relative(src, file).split(path.sep)[0];
      for (const spec of imports(file)) {
        if (!spec.startsWith('../')) continue;
        const target = path.relative(src, path.resolve(path.dirname(file), spec)).split(path.sep);
        if (target[0] === area) continue;
        const isDoor = target.length === 2 && target[1] === 'index.js';
        const cliException = area === 'cli' && target[0] === 'control';
        const clientException = area === 'control' && target[0] === 'util' && path.basename(file) === 'client.ts';
        expect(isDoor || cliException || clientException, `${path.relative(src, file)} reaches into ${spec}`).toBe(true);
      }
    }
  });
});
