import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepTempFiles, sweepTempFilesIn, writeFileAtomic } from '../../../src/util/index.js';
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
    writeFileSync(path.join(dir.path, '.f.json.123.0123456789ab.tmp'), 'partial');
    writeFileSync(path.join(dir.path, '.f.json.123.not-our-pattern.tmp'), 'not ours');
    writeFileSync(path.join(dir.path, '.other.json.1.0123456789ab.tmp'), 'another target');
    expect(await sweepTempFiles(file)).toEqual(['.f.json.123.0123456789ab.tmp']);
    expect(readdirSync(dir.path).sort()).toEqual(['.f.json.123.not-our-pattern.tmp', '.other.json.1.0123456789ab.tmp']);
  });

  it('sweeps the temp files of every atomically written file in a folder, and nothing else', async () => {
    const dir = tempDir();
    dirs.push(dir);
    writeFileSync(path.join(dir.path, '.settings.json.77.00aa11bb22cc.tmp'), 'partial');
    writeFileSync(path.join(dir.path, '.sources.json.8.abcdefabcdef.tmp'), 'partial');
    writeFileSync(path.join(dir.path, 'settings.json'), '{}');
    writeFileSync(path.join(dir.path, '.notes.tmp'), 'the user\'s');
    expect((await sweepTempFilesIn(dir.path)).sort()).toEqual(['.settings.json.77.00aa11bb22cc.tmp', '.sources.json.8.abcdefabcdef.tmp']);
    expect(readdirSync(dir.path).sort()).toEqual(['.notes.tmp', 'settings.json']);
  });
});
