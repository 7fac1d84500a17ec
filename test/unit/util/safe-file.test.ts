import { execFileSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSafe, checkDirectory, readSafe } from '../../../src/util/index.js';
import { tempDir } from '../../helpers/wispd.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d.path;
}

describe('safe files', () => {
  it('reads and appends to a file of ours, creating it 0600', async () => {
    const file = path.join(dir(), 'a.jsonl');
    await appendSafe(file, 'one\n');
    await appendSafe(file, 'two\n');
    expect(await readSafe(file)).toBe('one\ntwo\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('never follows a symlink, for reading or appending, and leaves its target untouched', async () => {
    const d = dir();
    const target = path.join(d, 'target');
    writeFileSync(target, 'keep', { mode: 0o600 });
    symlinkSync(target, path.join(d, 'link'));
    await expect(readSafe(path.join(d, 'link'))).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining('it is a symlink') });
    await expect(appendSafe(path.join(d, 'link'), 'x')).rejects.toMatchObject({ code: 'UNSAFE_FILE' });
    // Dangling: not created through the link either.
    symlinkSync(path.join(d, 'nowhere'), path.join(d, 'dangling'));
    await expect(appendSafe(path.join(d, 'dangling'), 'x')).rejects.toMatchObject({ code: 'UNSAFE_FILE' });
    expect(readFileSync(target, 'utf8')).toBe('keep');
    expect(() => statSync(path.join(d, 'nowhere'))).toThrow();
  });

  it('refuses a file group or others can write, and a FIFO, without blocking', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'open'), '{}');
    chmodSync(path.join(d, 'open'), 0o664);
    await expect(readSafe(path.join(d, 'open'))).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining('writable by group or others (mode 0664)') });
    execFileSync('mkfifo', [path.join(d, 'fifo')]);
    await expect(readSafe(path.join(d, 'fifo'))).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining('not a regular file') });
    await expect(appendSafe(path.join(d, 'fifo'), 'x')).rejects.toMatchObject({ code: 'UNSAFE_FILE' });
  });

  it('refuses to write to a file with another name (a hard link)', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'mine'), 'mine', { mode: 0o600 });
    linkSync(path.join(d, 'mine'), path.join(d, 'audit.jsonl'));
    await expect(appendSafe(path.join(d, 'audit.jsonl'), 'x')).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining('2 hard links') });
    expect(readFileSync(path.join(d, 'mine'), 'utf8')).toBe('mine');
  });

  it('creates a missing directory 0700, refuses an open one without changing its mode', async () => {
    const d = dir();
    expect(await checkDirectory(path.join(d, 'a', 'b'), { create: true, private: true })).toBe('created');
    expect(statSync(path.join(d, 'a', 'b')).mode & 0o777).toBe(0o700);
    mkdirSync(path.join(d, 'open'));
    chmodSync(path.join(d, 'open'), 0o755);
    await expect(checkDirectory(path.join(d, 'open'), { create: true, private: true })).rejects.toMatchObject({
      code: 'UNSAFE_FILE',
      message: expect.stringContaining(`chmod 700 ${path.join(d, 'open')}`),
    });
    expect(statSync(path.join(d, 'open')).mode & 0o777).toBe(0o755);
    // Not private but not writable by others: fine where privacy is not asked for.
    expect(await checkDirectory(path.join(d, 'open'))).toBe('existing');
    // Inside a directory anyone may rename entries of (world-writable, not sticky): refused.
    mkdirSync(path.join(d, 'anyone'));
    chmodSync(path.join(d, 'anyone'), 0o777);
    await expect(checkDirectory(path.join(d, 'anyone', 'data'), { create: true, private: true })).rejects.toMatchObject({
      code: 'UNSAFE_FILE',
      message: expect.stringContaining(`its parent ${path.join(d, 'anyone')} is writable by everyone and not sticky (mode 0777)`),
    });
    // Sticky (like /tmp): fine.
    chmodSync(path.join(d, 'anyone'), 0o1777);
    expect(await checkDirectory(path.join(d, 'anyone', 'data'), { create: true, private: true })).toBe('existing');
    symlinkSync(path.join(d, 'open'), path.join(d, 'link'));
    await expect(checkDirectory(path.join(d, 'link'))).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining('it is a symlink') });
  });
});
