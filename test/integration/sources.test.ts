import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Result, Service } from '../../src/core/index.js';
import { pidOf, scenarioServer } from '../helpers/services.js';
import { daemonEnv, environOf, killLeftovers, onLinux, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Config sources with a real daemon: files written to its config dir (<data>/config, as
 * the data dir is given) and to a project directory, synced at start and on reload.
 */
const home = tempDir();
const data = path.join(home.path, 'data');
const config = path.join(data, 'config');
const projectDir = path.join(home.path, 'project');
const SECRET = 'file-secret-5531';
const env = daemonEnv({ FILE_TOKEN: SECRET, OTHER_TOKEN: 'other-9911' });
let daemon: RunningDaemon;
let client: WispClient;

type Sources = Result<'sources.list'>;

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2));
}

const stdio = (flags: string[] = [], extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [scenarioServer, ...flags], ...extra });

function globalFile(servers: Record<string, unknown>): void {
  writeJson(path.join(config, 'settings.json'), { enabledPlugins: ['kit'], config: { mcpServers: servers } });
}
function projectFile(servers: Record<string, unknown>): void {
  writeJson(path.join(projectDir, '.mcp.json'), { mcpServers: servers });
}

async function service(name: string): Promise<Service> {
  return (await client.call('services.get', { name })).service;
}
async function activate(name: string): Promise<Service> {
  const current = await service(name);
  return (await client.call('services.activate', { id: current.id, configVersion: current.configVersion })).service;
}
const entry = (view: Sources, name: string) => view.report?.entries.find((e) => e.name === name);

beforeAll(async () => {
  // The data dir must be private (0700) if it exists before the first start.
  mkdirSync(data, { mode: 0o700 });
  globalFile({
    'with-secret': stdio(['--tools', '1'], { env: { API_TOKEN: '${FILE_TOKEN}', UNSET_ONE: '${NOT_SET_ANYWHERE}' } }),
    shared: stdio(['--tools', '1']),
  });
  writeJson(path.join(config, 'plugins', 'kit-folder', 'plugin.json'), { name: 'kit', mcpServers: { helper: stdio(['--tools', '2']), copy: stdio(['--tools', '1']) } });
  writeJson(path.join(config, 'plugins', 'off', 'plugin.json'), { name: 'off', mcpServers: { never: stdio() } });
  projectFile({ shared: stdio(['--tools', '3']), local: stdio(['--tools', '1']) });
  daemon = await startWispd(data, { env });
  client = await daemon.connect();
  // A service the user registered by hand, with the same name as a later entry.
  await client.call('services.register', { name: 'mine', command: process.execPath, args: [scenarioServer] });
  await client.call('sources.addProject', { directory: projectDir });
});
afterAll(async () => {
  await client.close();
  killLeftovers();
  home.remove();
});

describe('config sources', () => {
  it('merges global, enabled plugins and projects into disabled services, and says what it did with each entry', async () => {
    const view = await client.call('sources.list');
    expect(view).toMatchObject({ configDir: config, projects: [projectDir] });
    expect(view.report?.entries.map((e) => [e.name, e.origin.source])).toEqual([
      ['with-secret', 'global'],
      ['kit.helper', 'plugin'],
      ['shared', 'project'],
      ['local', 'project'],
    ]);
    expect(entry(view, 'shared')?.overrides).toEqual({ source: 'global', file: path.join(config, 'settings.json'), plugin: null });
    expect(entry(view, 'with-secret')?.warnings).toEqual([expect.stringContaining('${NOT_SET_ANYWHERE} is not set')]);
    expect(view.report?.skipped.map((s) => [s.name, s.reason])).toEqual(
      expect.arrayContaining([
        ['shared', expect.stringContaining('replaced whole')],
        ['kit.copy', expect.stringContaining('same content as "local"') as unknown],
      ]),
    );
    expect(view.report?.entries.some((e) => e.name.startsWith('off.'))).toBe(false);
    const shared = await service('shared');
    expect(shared).toMatchObject({ enabled: false, args: [scenarioServer, '--tools', '3'], cwd: projectDir, origin: { kind: 'source', source: 'project', file: path.join(projectDir, '.mcp.json') } });
  });

  it('keeps values from files in the secret store only, and hands them to the server', async () => {
    const registryText = readFileSync(path.join(data, 'mcp-servers.json'), 'utf8');
    expect(registryText).not.toContain(SECRET);
    const withSecret = await service('with-secret');
    // Written with ${VAR}: kept as written (never the value), filled in at launch.
    expect(withSecret.env).toEqual([]);
    expect(withSecret.envTemplates).toEqual([
      { name: 'API_TOKEN', template: '${FILE_TOKEN}' },
      { name: 'UNSET_ONE', template: '${NOT_SET_ANYWHERE}' },
    ]);
    expect(withSecret.environmentReads).toEqual([
      { field: 'env.API_TOKEN', variable: 'FILE_TOKEN', secret: true, file: path.join(config, 'settings.json') },
      { field: 'env.UNSET_ONE', variable: 'NOT_SET_ANYWHERE', secret: true, file: path.join(config, 'settings.json') },
    ]);
    expect(JSON.stringify(await client.call('sources.list'))).not.toContain(SECRET);
    const active = await activate('with-secret');
    expect(active.connection.status).toBe('active');
  });

  it.runIf(onLinux)('the server has the file\'s value in its environment (read from /proc)', async () => {
    expect(environOf(pidOf(await activate('with-secret')))).toContain(`API_TOKEN=${SECRET}`);
  });

  it('on reload: disables a changed entry, keeps an unchanged one running, removes a gone one, never touches a hand-made service', async () => {
    await activate('local');
    const before = await service('shared');
    const mine = await service('mine');
    projectFile({ shared: stdio(['--tools', '4']), mine: stdio() });
    const view = await client.call('sources.reload');
    expect(entry(view, 'shared')?.action).toBe('updated');
    expect(entry(view, 'mine')).toMatchObject({ action: 'skipped', reason: expect.stringContaining('registered by hand') });
    expect(view.report?.removed).toEqual(['local']);
    const shared = await service('shared');
    expect(shared).toMatchObject({ enabled: false, args: [scenarioServer, '--tools', '4'], configVersion: before.configVersion + 1 });
    expect(await service('mine')).toEqual(mine);
    await expect(service('local')).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
    // The unchanged global entry kept running through the reload.
    expect((await service('with-secret')).connection.status).toBe('active');
  });

  it('disables an entry whose secret value changed, though the file names the same variable', async () => {
    globalFile({ 'with-secret': stdio(['--tools', '1'], { env: { API_TOKEN: '${OTHER_TOKEN}', UNSET_ONE: '${NOT_SET_ANYWHERE}' } }), shared: stdio(['--tools', '1']) });
    const view = await client.call('sources.reload');
    expect(entry(view, 'with-secret')?.action).toBe('updated');
    expect((await service('with-secret')).connection.status).toBe('disabled');
  });

  it('refuses edits of a synced service: the file is where it changes', async () => {
    const shared = await service('shared');
    await expect(client.call('services.update', { id: shared.id, configVersion: shared.configVersion, set: { args: [] } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('wispctl mcp reload'),
    });
    await expect(client.call('services.setEnv', { id: shared.id, mode: 'replace', variables: [] })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it('brings synced services back disabled after a restart, their file values restored, nothing bumped', async () => {
    const before = await service('with-secret');
    await client.call('daemon.shutdown');
    await daemon.exited;
    daemon = await startWispd(data, { env });
    client = await daemon.connect();
    const after = await service('with-secret');
    expect(after).toMatchObject({ enabled: false, configVersion: before.configVersion, id: before.id });
    expect(entry(await client.call('sources.list'), 'with-secret')?.action).toBe('unchanged');
    expect((await activate('with-secret')).connection.status).toBe('active');
    await client.call('services.disable', { id: after.id });
  });

  it.runIf(onLinux)('after the restart the server has the restored value in its environment (read from /proc)', async () => {
    expect(environOf(pidOf(await activate('with-secret')))).toContain('API_TOKEN=other-9911');
    await client.call('services.disable', { name: 'with-secret' });
  });

  it('falls back to the global entry when the project that overrode it is no longer a source', async () => {
    // Since 'local' left, the plugin's copy of it is no longer a duplicate, so it runs as kit.copy.
    expect((await service('kit.copy')).origin).toMatchObject({ kind: 'source', source: 'plugin', plugin: 'kit' });
    const view = await client.call('sources.removeProject', { directory: projectDir });
    expect(view.projects).toEqual([]);
    expect(entry(view, 'shared')).toMatchObject({ action: 'updated', origin: { source: 'global' }, overrides: null });
    // The global 'shared' now has the content kit.copy duplicated: the plugin entry goes.
    expect(view.report?.removed).toEqual(['kit.copy']);
    expect((await service('shared')).args).toEqual([scenarioServer, '--tools', '1']);
    expect((await client.call('services.list')).services.map((s) => s.name).sort()).toEqual(['kit.helper', 'mine', 'shared', 'with-secret']);
  });

  it('refuses to add a project whose file is not JSON: nothing recorded, the other sources as they were', async () => {
    writeFileSync(path.join(projectDir, '.mcp.json'), '{ not json');
    const before = readFileSync(path.join(data, 'sources.json'), 'utf8');
    await expect(client.call('sources.addProject', { directory: projectDir })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining(`${projectDir} was not added: ${path.join(projectDir, '.mcp.json')} is not valid JSON`) as string,
    });
    expect(readFileSync(path.join(data, 'sources.json'), 'utf8')).toBe(before);
    const view = await client.call('sources.list');
    expect(view.projects).toEqual([]);
    expect(entry(view, 'with-secret')?.action).toBe('unchanged');
  });
});

describe('one-off import', () => {
  it('imports a Claude-Desktop-style and a VS Code-style file as services registered by hand, values in the store', async () => {
    const desktop = JSON.stringify({ mcpServers: { 'imported-a': stdio([], { env: { KEY: 'import-secret-1234' } }), bad: { args: [] } } });
    const result = await client.call('services.import', { content: desktop, file: '/somewhere/claude_desktop_config.json', storage: 'session' });
    expect(result.imported.map((s) => [s.name, s.origin.kind, s.enabled])).toEqual([['imported-a', 'import', false]]);
    expect(result.skipped).toEqual([{ name: 'bad', reason: expect.stringContaining('neither command') }]);
    expect(readFileSync(path.join(data, 'mcp-servers.json'), 'utf8')).not.toContain('import-secret-1234');
    const vscode = JSON.stringify({
      servers: {
        'imported-b': { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${FILE_TOKEN}' } },
        'imported-c': { type: 'http', url: 'https://example.com/oauth-mcp', oauth: { enabled: true, clientId: 'cid' } },
      },
    });
    const second = await client.call('services.import', { content: vscode, storage: 'session' });
    // A value with ${VAR} is kept as written and filled in at launch; its variable is named, with the file.
    expect(second.imported[0]).toMatchObject({
      name: 'imported-b',
      transport: 'http',
      url: 'https://example.com/mcp',
      headers: [],
      headerTemplates: [{ name: 'Authorization', template: 'Bearer ${FILE_TOKEN}' }],
      environmentReads: [{ field: 'headers.Authorization', variable: 'FILE_TOKEN', secret: true, file: 'a pasted file' }],
      oauth: null,
    });
    expect(second.imported[1]).toMatchObject({ name: 'imported-c', oauth: { enabled: true, clientId: 'cid', scopes: null } });
    expect(JSON.stringify(second)).not.toContain(SECRET);
    await expect(client.call('services.import', { content: 'nope', storage: 'session' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });
});
