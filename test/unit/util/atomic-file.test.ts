import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepTempFiles, writeFileAtomic } from '../../../src/util/index.js';
import { tempDir } from '../../helpers/wispd.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

describe('writeFileAtomic', () => {
  it('replaces the file whole, mode 0600, leaving no temp file', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir.path, 'f.json');
    writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir.path)).toEqual(['f.json']);
  });

  it('sweeps only its own leftover temp files', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir.path, 'f.json');
    writeFileSync(path.join(dir.path, '.f.json.123.abc.tmp'), 'partial');
    writeFileSync(path.join(dir.path, '.other.json.1.a.tmp'), 'not ours');
    expect(await sweepTempFiles(file)).toEqual(['.f.json.123.abc.tmp']);
    expect(readdirSync(dir.path)).toEqual(['.other.json.1.a.tmp']);
  });
});
