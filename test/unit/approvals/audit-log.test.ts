import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/approvals/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function log(): { audit: AuditLog; lines: () => Record<string, unknown>[]; errors: unknown[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wisp-audit-'));
  dirs.push(dir);
  const file = path.join(dir, 'audit.jsonl');
  const errors: unknown[] = [];
  const audit = new AuditLog(file, (error) => errors.push(error));
  const lines = (): Record<string, unknown>[] =>
    readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  return { audit, lines, errors };
}

describe('AuditLog', () => {
  it('a record is on disk when its append resolves, in order, also when many arrive at once', async () => {
    const { audit, lines, errors } = log();
    const first = Array.from({ length: 50 }, (_, i) => audit.append({ n: i }));
    await first[0];
    // Appended while the first batch is being written: the next batch, after it.
    const second = Array.from({ length: 50 }, (_, i) => audit.append({ n: 50 + i }));
    await first[49];
    expect(lines().map((r) => r.n)).toEqual(Array.from({ length: lines().length }, (_, i) => i));
    expect(lines().length).toBeGreaterThanOrEqual(50);
    await second[49];
    expect(lines().map((r) => r.n)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Each append resolved only once its own record was written.
    for (const [i, done] of second.entries()) {
      await done;
      expect(lines().length).toBeGreaterThan(50 + i);
    }
    await audit.close();
    expect(errors).toEqual([]);
  });

  it('records appended one after another, each awaited, each reach the file', async () => {
    const { audit, lines } = log();
    for (let i = 0; i < 5; i++) {
      await audit.append({ n: i });
      expect(lines().at(-1)).toEqual({ n: i });
    }
    await audit.close();
  });
});
