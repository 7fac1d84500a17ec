import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InstanceLock } from '../../../src/daemon/instance-lock.js';
import { tempDir } from '../../helpers/wispd.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));
function lockPath(): string {
  const dir = tempDir();
  dirs.push(dir);
  return path.join(dir.path, 'wispd.lock');
}

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(result.stdout.toString());
}

describe('InstanceLock', () => {
  it('lets one holder in and names it to the next', async () => {
    const file = lockPath();
    const lock = await InstanceLock.acquire(file, '/run/a.sock');
    await expect(InstanceLock.acquire(file, '/run/b.sock')).rejects.toMatchObject({
      code: 'ALREADY_RUNNING',
      message: `wispd is already running (pid ${process.pid}, socket /run/a.sock)`,
    });
    await lock.release();
    expect(existsSync(file)).toBe(false);
    await (await InstanceLock.acquire(file, '/run/b.sock')).release();
  });

  it('breaks a lock whose holder is dead', async () => {
    const file = lockPath();
    writeFileSync(file, JSON.stringify({ pid: deadPid(), socket: '/old.sock', token: 'old' }));
    const lock = await InstanceLock.acquire(file, '/new.sock');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, socket: '/new.sock' });
    await lock.release();
  });

  it('breaks an unreadable lock', async () => {
    const file = lockPath();
    writeFileSync(file, 'garbage', { mode: 0o600 });
    const lock = await InstanceLock.acquire(file, '/new.sock');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, socket: '/new.sock' });
    await lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('breaks a lock naming a live pid whose start time is not the holder\'s (the pid was reused)', async () => {
    const file = lockPath();
    writeFileSync(file, JSON.stringify({ pid: 1, startTime: 'a-previous-boot:42', socket: '/old.sock', token: 'old' }), { mode: 0o600 });
    const lock = await InstanceLock.acquire(file, '/new.sock');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, socket: '/new.sock', startTime: expect.any(String) });
    await lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('breaks an older lock without a start time naming a live pid whose socket does not answer', async () => {
    const file = lockPath();
    writeFileSync(file, JSON.stringify({ pid: 1, socket: path.join(path.dirname(file), 'none.sock'), token: 'old' }), { mode: 0o600 });
    const lock = await InstanceLock.acquire(file, '/new.sock');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, socket: '/new.sock', startTime: expect.any(String) });
    await lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('removes the temp files that killed starters left beside the lock, and only those', async () => {
    const file = lockPath();
    const old = new Date(Date.now() - 3_600_000);
    const leftover = `${file}.0123456789abcdef01234567.tmp`;
    const other = `${file}.notes.tmp`;
    for (const f of [leftover, other]) {
      writeFileSync(f, '{}', { mode: 0o600 });
      utimesSync(f, old, old);
    }
    const lock = await InstanceLock.acquire(file, '/new.sock');
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(other)).toBe(true);
    await lock.release();
  });

  it('refuses a lock that is a symlink, naming it (UNSAFE_FILE), and leaves its target alone', async () => {
    const file = lockPath();
    const target = `${file}.target`;
    writeFileSync(target, JSON.stringify({ pid: deadPid(), socket: '/x.sock', token: 't' }), { mode: 0o600 });
    symlinkSync(target, file);
    await expect(InstanceLock.acquire(file, '/new.sock')).rejects.toMatchObject({ code: 'UNSAFE_FILE', message: expect.stringContaining(`unsafe ${file}: it is a symlink`) });
    expect(JSON.parse(readFileSync(target, 'utf8'))).toMatchObject({ socket: '/x.sock' });
  });

  it('gives a stale lock to exactly one of many racing starters', async () => {
    const file = lockPath();
    writeFileSync(file, JSON.stringify({ pid: deadPid(), socket: '/old.sock', token: 'old' }));
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => InstanceLock.acquire(file, `/s${i}.sock`)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'ALREADY_RUNNING' });
    await (won[0] as PromiseFulfilledResult<InstanceLock>).value.release();
  });

  it('does not remove a lock someone else holds when released twice', async () => {
    const file = lockPath();
    const first = await InstanceLock.acquire(file, '/a.sock');
    await first.release();
    const second = await InstanceLock.acquire(file, '/b.sock');
    await first.release();
    expect(existsSync(file)).toBe(true);
    await second.release();
  });
});
