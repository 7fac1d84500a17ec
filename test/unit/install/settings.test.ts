import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RUNTIME_DIRS, InstallSettingsStore } from '../../../src/install/index.js';
import { DEFAULT_MODEL_SETTINGS, ModelSettingsStore } from '../../../src/model/index.js';
import { SettingsFile } from '../../../src/util/index.js';
import { tempDir } from '../../helpers/wispd.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

/** settings.json in a fresh data dir, read the way the daemon reads it: one file, a section per area. */
async function open(content?: string) {
  const dir = tempDir();
  dirs.push(dir);
  const file = path.join(dir.path, 'settings.json');
  if (content !== undefined) writeFileSync(file, content, { mode: 0o600 });
  const settings = new SettingsFile(file);
  const model = new ModelSettingsStore(settings);
  const installs = new InstallSettingsStore(settings, ['/opt/test/bin']);
  const problem = await settings.load(new Date('2025-01-01T00:00:00.000Z'));
  return { dir: dir.path, file, model, installs, problem };
}

const BOTH = {
  schemaVersion: 1,
  model: { model: 'deepseek-reasoner', maxRetries: 1, keyStorage: 'keychain' },
  installs: { runtimeDirs: ['/usr/local/bin'], registry: 'https://npm.example/', caFile: '/etc/ca.pem', timeoutMs: 90_000 },
};

describe('settings.json: model settings (model/) and install settings (install/) in one file', () => {
  it('loads an existing file that holds install settings into the install store, and model settings into the model store', async () => {
    const { model, installs, problem } = await open(JSON.stringify(BOTH, null, 2));
    expect(problem).toBeNull();
    expect(installs.settings).toEqual({ runtimeDirs: ['/usr/local/bin'], registry: 'https://npm.example/', caFile: '/etc/ca.pem', timeoutMs: 90_000, sandbox: true });
    expect(model.settings).toEqual({ ...DEFAULT_MODEL_SETTINGS, model: 'deepseek-reasoner', maxRetries: 1 });
    expect(model.keyStorage).toBe('keychain');
  });

  it('applies the defaults when there is no file, or no installs section', async () => {
    const none = await open();
    expect(none.problem).toBeNull();
    expect(none.installs.view).toEqual({ runtimeDirs: ['/opt/test/bin'], registry: null, caFile: null, timeoutMs: 180_000, sandbox: true });
    const modelOnly = await open(JSON.stringify({ schemaVersion: 1, model: {} }));
    expect(modelOnly.problem).toBeNull();
    expect(modelOnly.installs.settings.runtimeDirs).toEqual(['/opt/test/bin']);
    expect(new InstallSettingsStore(new SettingsFile(path.join(modelOnly.dir, 'other.json'))).settings.runtimeDirs).toEqual([...DEFAULT_RUNTIME_DIRS]);
  });

  it('writes each area\'s changes without losing the other\'s, in the same file format', async () => {
    const { file, model, installs } = await open(JSON.stringify(BOTH));
    await Promise.all([installs.update({ registry: null, timeoutMs: 5000 }), model.update({ model: 'deepseek-chat' })]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      schemaVersion: 1,
      model: { ...BOTH.model, model: 'deepseek-chat' },
      installs: { ...BOTH.installs, registry: null, timeoutMs: 5000 },
    });
    // A fresh daemon reads back what was written.
    const again = await open(readFileSync(file, 'utf8'));
    expect(again.installs.settings).toMatchObject({ registry: null, timeoutMs: 5000, caFile: '/etc/ca.pem' });
    expect(again.model.settings.model).toBe('deepseek-chat');
  });

  it('a first install setting on a fresh data dir writes a file every version reads (with its model section)', async () => {
    const { file, installs } = await open();
    await installs.update({ caFile: '/etc/ca.pem' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ schemaVersion: 1, model: {}, installs: { caFile: '/etc/ca.pem' } });
  });

  it.each([
    ['a bad installs section', { ...BOTH, installs: { runtimeDirs: ['relative/bin'] } }, '/installs/runtimeDirs/0'],
    ['a bad model section', { ...BOTH, model: { baseUrl: 42 } }, '/model/baseUrl'],
    ['an unknown section', { ...BOTH, extra: {} }, 'additional properties'],
    ['no model section', { schemaVersion: 1, installs: {} }, "required property 'model'"],
  ])('moves aside, intact, a file with %s; every default applies', async (_kind, content, named) => {
    const text = JSON.stringify(content);
    const { dir, file, model, installs, problem } = await open(text);
    expect(problem).toMatchObject({ file, problem: expect.stringContaining(named), movedTo: expect.stringContaining(`${file}.bad-`) });
    expect(problem?.problem).toMatch(/^fails its schema: .*: moved aside, defaults apply$/);
    expect(readFileSync(problem?.movedTo ?? '', 'utf8')).toBe(text);
    expect(readdirSync(dir)).not.toContain('settings.json');
    expect(installs.settings.runtimeDirs).toEqual(['/opt/test/bin']);
    expect(model.settings).toEqual(DEFAULT_MODEL_SETTINGS);
  });
});
