import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROFILES_FILE, ProfileStore, type StoredProfile } from '../../../src/daemon/profile-store.js';
import { tempDir } from '../../helpers/wispd.js';

/** profiles.json (issue 35): read and written as the daemon does, a bad file kept as it is and refused. */
const dirs: { remove: () => void }[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

function dataDir(content?: string): { dir: string; file: string } {
  const dir = tempDir();
  dirs.push(dir);
  const file = path.join(dir.path, PROFILES_FILE);
  if (content !== undefined) writeFileSync(file, content, { mode: 0o600 });
  return { dir: dir.path, file };
}

const work: StoredProfile = { name: 'work', description: 'for work', services: [{ id: 'id-a', name: 'a' }] };

describe('ProfileStore', () => {
  it('starts with none and no file; a change is written whole, and read back by another store', async () => {
    const { dir, file } = dataDir();
    const store = new ProfileStore(dir);
    expect(await store.load()).toBeNull();
    expect(await store.list()).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    await store.change('work', () => work);
    await store.change('home', () => ({ ...work, name: 'home', description: null }));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ schemaVersion: 1, profiles: [work, { ...work, name: 'home', description: null }] });
    const again = new ProfileStore(dir);
    expect(await again.load()).toBeNull();
    expect((await again.list()).map((p) => p.name)).toEqual(['work', 'home']);
    await again.change('work', () => null);
    expect((await new ProfileStore(dir).list()).map((p) => p.name)).toEqual(['home']);
  });

  it('changes run one at a time, each on what the last one left; a refused change writes nothing', async () => {
    const { dir, file } = dataDir();
    const store = new ProfileStore(dir);
    await Promise.all(['a', 'b', 'c'].map((name) => store.change(name, (current) => (current === undefined ? { ...work, name } : current))));
    expect((await store.list()).map((p) => p.name)).toEqual(['a', 'b', 'c']);
    const before = readFileSync(file, 'utf8');
    await expect(store.change('d', () => { throw new Error('no'); })).rejects.toThrow('no');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a file edited by hand is what the next request sees', async () => {
    const { dir, file } = dataDir();
    const store = new ProfileStore(dir);
    await store.change('work', () => work);
    writeFileSync(file, JSON.stringify({ schemaVersion: 1, profiles: [{ ...work, name: 'other' }] }));
    expect((await store.list()).map((p) => p.name)).toEqual(['other']);
    await store.change('work', () => work);
    expect((await new ProfileStore(dir).list()).map((p) => p.name)).toEqual(['other', 'work']);
  });

  it.each([
    ['not JSON', '{"schemaVersion": 1, "profiles": [', /not valid JSON/],
    ['another schema version', '{"schemaVersion": 2, "profiles": []}', /fails its schema: \/schemaVersion/],
    ['a bad name', JSON.stringify({ schemaVersion: 1, profiles: [{ ...work, name: 'a.b' }] }), /fails its schema: \/profiles\/0\/name/],
    ['an unknown field', JSON.stringify({ schemaVersion: 1, profiles: [{ ...work, extra: true }] }), /fails its schema/],
    ['a name twice', JSON.stringify({ schemaVersion: 1, profiles: [work, work] }), /names the profile work twice/],
  ])('a file with %s is reported at load, refused with PROFILES_UNREADABLE at every request, and never written over', async (_what, content, problem) => {
    const { dir, file } = dataDir(content);
    const store = new ProfileStore(dir);
    const loaded = await store.load();
    expect(loaded).toMatchObject({ file, movedTo: null });
    expect(loaded?.problem).toMatch(problem);
    await expect(store.list()).rejects.toMatchObject({ code: 'PROFILES_UNREADABLE', details: { file } });
    await expect(store.change('new', () => work)).rejects.toMatchObject({ code: 'PROFILES_UNREADABLE' });
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(readdirSync(dir)).toEqual([PROFILES_FILE]);
    // Fixed by hand: used at the next request, no restart.
    writeFileSync(file, JSON.stringify({ schemaVersion: 1, profiles: [work] }));
    expect(await store.list()).toEqual([work]);
  });

  it('a file that is not safe to read stops the daemon at start (UNSAFE_FILE), and is refused later', async () => {
    const { dir, file } = dataDir(JSON.stringify({ schemaVersion: 1, profiles: [] }));
    chmodSync(file, 0o666);
    await expect(new ProfileStore(dir).load()).rejects.toMatchObject({ code: 'UNSAFE_FILE' });
    chmodSync(file, 0o600);
    const store = new ProfileStore(dir);
    expect(await store.load()).toBeNull();
    chmodSync(file, 0o666);
    await expect(store.list()).rejects.toMatchObject({ code: 'PROFILES_UNREADABLE' });
  });

  it('at most 32 profiles: the 33rd is LIMIT_EXCEEDED and nothing is written', async () => {
    const { dir, file } = dataDir();
    const store = new ProfileStore(dir);
    for (let i = 0; i < 32; i++) await store.change(`p${i}`, () => ({ ...work, name: `p${i}` }));
    const before = readFileSync(file, 'utf8');
    await expect(store.change('p32', () => ({ ...work, name: 'p32' }))).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { max: 32 } });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
