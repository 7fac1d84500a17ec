import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { scenarioServer } from '../helpers/services.js';
import { perTestHomes, runWispctl, startWispd, type RunningDaemon } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

/**
 * Issue 33, LOW 6: another user who can write a registered project directory could stop the
 * daemon from starting (an unsafe .mcp.json there made wispd refuse to start, UNSAFE_FILE),
 * and a failed add-project was recorded anyway. Now the daemon always starts: a source that is
 * there but unusable (not the user's own, unreadable, not JSON) is skipped with a
 * storage.warning, the services it gave are kept exactly as they were, and an add-project of
 * such a file is refused and not recorded. Real files, real modes, a real daemon.
 */
const home = perTestHomes(afterEach);
const isRoot = needs(process.getuid?.() === 0, 'not root: the tests of files another user made (they chown)');

type Warning = Extract<WispEvent, { type: 'storage.warning' }>;

function write(file: string, value: unknown, mode = 0o644): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  chmodSync(file, mode);
}

const stdio = (tools: string) => ({ command: process.execPath, args: [scenarioServer, '--tools', tools] });

/**
 * A data dir (0700), a config dir with a global entry, and three project directories with
 * entries. The config dir is given outside the data dir (--config-dir): everything in the
 * private data dir is checked at start as the daemon's own, and stays fatal when unsafe.
 */
function layout(): { data: string; config: string; projects: { group: string; world: string; broken: string } } {
  const root = home();
  const data = path.join(root, 'data');
  mkdirSync(data, { mode: 0o700 });
  const config = path.join(root, 'config');
  write(path.join(config, 'settings.json'), { mcpServers: { shared: stdio('1'), global: stdio('1') } });
  const projects = { group: path.join(root, 'group-writable'), world: path.join(root, 'world-writable'), broken: path.join(root, 'broken') };
  // The group-writable project also overrides the global "shared": while its file is unusable,
  // the global entry must not take the service over.
  write(path.join(projects.group, '.mcp.json'), { mcpServers: { 'from-group': stdio('2'), shared: stdio('3') } });
  write(path.join(projects.world, '.mcp.json'), { mcpServers: { 'from-world': { ...stdio('2'), env: { TOKEN: 'file-value-1' } } } });
  write(path.join(projects.broken, '.mcp.json'), { mcpServers: { 'from-broken': stdio('2') } });
  return { data, config, projects };
}

async function warnings(client: WispClient): Promise<Warning[]> {
  const seen: WispEvent[] = [];
  client.onEvent((e) => seen.push(e));
  await client.call('events.subscribe', { since: 0 });
  // The replay comes before the subscribe reply; one more round trip flushes it for certain.
  await client.call('daemon.status');
  return seen.filter((e): e is Warning => e.type === 'storage.warning');
}

async function services(client: WispClient): Promise<Service[]> {
  return (await client.call('services.list')).services.sort((a, b) => a.name.localeCompare(b.name));
}

/** What must not change for a kept service: everything stored (the connection state aside). */
const stored = (s: Service) => ({ id: s.id, name: s.name, command: s.command, args: s.args, cwd: s.cwd, env: s.env, origin: s.origin, configVersion: s.configVersion, updatedAt: s.updatedAt });

async function stop(daemon: RunningDaemon, client: WispClient): Promise<void> {
  await client.call('daemon.shutdown');
  await daemon.exited;
}

describe('a config source that is there but unusable', () => {
  it('never stops the daemon from starting: it is skipped with a storage.warning, and the services it gave are kept exactly as they were', async () => {
    const { data, config, projects } = layout();
    let daemon = await startWispd(data, { args: ['--config-dir', config] });
    let client = await daemon.connect();
    for (const directory of Object.values(projects)) await client.call('sources.addProject', { directory });
    const before = await services(client);
    expect(before.map((s) => s.name)).toEqual(['from-broken', 'from-group', 'from-world', 'global', 'shared']);
    expect(before.find((s) => s.name === 'shared')?.args).toEqual([scenarioServer, '--tools', '3']);
    await stop(daemon, client);

    // Another user rewrites the files they can write (group- or world-writable now), and a third one breaks.
    const groupFile = path.join(projects.group, '.mcp.json');
    const worldFile = path.join(projects.world, '.mcp.json');
    const brokenFile = path.join(projects.broken, '.mcp.json');
    write(groupFile, { mcpServers: { 'from-group': { command: '/bin/sh', args: ['-c', 'planted'] } } }, 0o664);
    write(worldFile, { mcpServers: { planted: stdio('1') } }, 0o646);
    write(brokenFile, '{ "mcpServers": ', 0o644);

    daemon = await startWispd(data, { args: ['--config-dir', config] });
    client = await daemon.connect();
    const after = await services(client);
    expect(after.map(stored)).toEqual(before.map(stored));
    expect(after.every((s) => s.connection.status === 'disabled')).toBe(true);

    const view = await client.call('sources.list');
    expect(view.projects).toEqual([projects.group, projects.world, projects.broken]);
    expect(view.report?.problems).toEqual([
      { file: groupFile, message: expect.stringContaining(`unsafe ${groupFile}: it is writable by group or others (mode 0664)`) as string, code: 'UNSAFE_FILE', kept: ['from-group', 'shared'] },
      { file: worldFile, message: expect.stringContaining(`unsafe ${worldFile}: it is writable by group or others (mode 0646)`) as string, code: 'UNSAFE_FILE', kept: ['from-world'] },
      { file: brokenFile, message: expect.stringContaining('is not valid JSON') as string, code: 'INVALID_CONFIG', kept: ['from-broken'] },
    ]);
    expect(view.report?.removed).toEqual([]);
    // The global "shared" does not take over the service the unusable project gave.
    expect(view.report?.entries.find((e) => e.name === 'shared')).toMatchObject({ action: 'skipped', origin: { source: 'global' }, reason: expect.stringContaining('could not be used this time: kept as it was') as string });

    const raised = await warnings(client);
    expect(raised.map((w) => w.file)).toEqual([groupFile, worldFile, brokenFile]);
    expect(raised[0]?.problem).toMatch(/^unsafe .*\(UNSAFE_FILE\): this config source was skipped; the services it gave are kept as they were \(from-group, shared\)$/);

    // What a user sees: wispctl status and wispctl mcp sources name the file, the reason and what was kept.
    const status = await runWispctl(['--socket', daemon.socket, 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`warning:   config source skipped (UNSAFE_FILE): ${groupFile}: unsafe ${groupFile}: it is writable by group or others (mode 0664)`);
    expect(status.stdout).toContain(`warning:   config source skipped (INVALID_CONFIG): ${brokenFile}: is not valid JSON`);
    const sources = await runWispctl(['--socket', daemon.socket, 'mcp', 'sources']);
    expect(sources.stdout).toContain(`unusable: ${worldFile}: unsafe ${worldFile}: it is writable by group or others (mode 0646); nothing was read from it or written to it (fix or remove it, then try again) (UNSAFE_FILE): skipped; kept as they were: from-world`);

    // Once the user fixes a file, the next reload uses it again.
    write(groupFile, { mcpServers: { 'from-group': stdio('2'), shared: stdio('3') } }, 0o644);
    const reloaded = await client.call('sources.reload', {});
    expect(reloaded.report?.problems.map((p) => p.file)).toEqual([worldFile, brokenFile]);
    expect(reloaded.report?.entries.filter((e) => e.origin.file === groupFile).map((e) => [e.name, e.action]).sort()).toEqual([
      ['from-group', 'unchanged'],
      ['shared', 'unchanged'],
    ]);
    expect((await client.call('daemon.status')).sourceProblems.map((p) => [p.file, p.code])).toEqual([
      [worldFile, 'UNSAFE_FILE'],
      [brokenFile, 'INVALID_CONFIG'],
    ]);
    await stop(daemon, client);
  });

  it('a config dir or plugins/ that is not the user\'s own is not read, and its services are kept too', async () => {
    const { data, config } = layout();
    write(path.join(config, 'settings.json'), { enabledPlugins: ['kit'], mcpServers: { global: stdio('1') } });
    write(path.join(config, 'plugins', 'kit', 'plugin.json'), { name: 'kit', mcpServers: { tool: stdio('4') } });
    let daemon = await startWispd(data, { args: ['--config-dir', config] });
    let client = await daemon.connect();
    const before = await services(client);
    expect(before.map((s) => s.name)).toEqual(['global', 'kit.tool']);
    await stop(daemon, client);

    // The enabled plugin's manifest turns world-writable; a disabled one's is broken (left alone: it gave nothing).
    const manifest = path.join(config, 'plugins', 'kit', 'plugin.json');
    chmodSync(manifest, 0o666);
    write(path.join(config, 'plugins', 'off', 'plugin.json'), '{ broken');
    daemon = await startWispd(data, { args: ['--config-dir', config] });
    client = await daemon.connect();
    expect((await services(client)).map(stored)).toEqual(before.map(stored));
    expect((await client.call('sources.list')).report?.problems).toEqual([
      { file: manifest, message: expect.stringContaining(`unsafe ${manifest}: it is writable by group or others (mode 0666)`) as string, code: 'UNSAFE_FILE', kept: ['kit.tool'] },
    ]);
    await stop(daemon, client);
    chmodSync(manifest, 0o644);

    chmodSync(path.join(config, 'plugins'), 0o777);
    daemon = await startWispd(data, { args: ['--config-dir', config] });
    client = await daemon.connect();
    expect((await services(client)).map(stored)).toEqual(before.map(stored));
    expect((await client.call('sources.list')).report?.problems).toEqual([
      { file: path.join(config, 'plugins'), message: expect.stringContaining('it is writable by group or others (mode 0777)') as string, code: 'UNSAFE_FILE', kept: ['kit.tool'] },
    ]);
    await stop(daemon, client);

    chmodSync(path.join(config, 'plugins'), 0o755);
    chmodSync(config, 0o777);
    daemon = await startWispd(data, { args: ['--config-dir', config] });
    client = await daemon.connect();
    expect((await services(client)).map(stored)).toEqual(before.map(stored));
    expect((await client.call('sources.list')).report?.problems).toEqual([
      { file: config, message: expect.stringContaining(`unsafe ${config}: it is writable by group or others (mode 0777)`) as string, code: 'UNSAFE_FILE', kept: ['global', 'kit.tool'] },
    ]);
    await stop(daemon, client);
  });

  it.runIf(isRoot)('a .mcp.json that belongs to another user is skipped at start, its services kept', async () => {
    const { data, config, projects } = layout();
    let daemon = await startWispd(data, { args: ['--config-dir', config] });
    let client = await daemon.connect();
    await client.call('sources.addProject', { directory: projects.world });
    const before = await services(client);
    await stop(daemon, client);
    const file = path.join(projects.world, '.mcp.json');
    chownSync(file, 65534, 65534);
    daemon = await startWispd(data, { args: ['--config-dir', config] });
    client = await daemon.connect();
    expect((await services(client)).map(stored)).toEqual(before.map(stored));
    expect((await client.call('sources.list')).report?.problems).toEqual([
      { file, message: expect.stringContaining(`unsafe ${file}: it belongs to uid 65534, not to this user (uid 0)`) as string, code: 'UNSAFE_FILE', kept: ['from-world'] },
    ]);
    await stop(daemon, client);
  });
});

describe('sources add-project of a file that cannot be used', () => {
  it('is refused with its reason and not recorded, so the next start is not affected', async () => {
    const { data, config, projects } = layout();
    const daemon = await startWispd(data, { args: ['--config-dir', config] });
    const client = await daemon.connect();
    const ctl = (args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);
    const groupFile = path.join(projects.group, '.mcp.json');
    chmodSync(groupFile, 0o664);
    chmodSync(path.join(projects.world, '.mcp.json'), 0o646);
    write(path.join(projects.broken, '.mcp.json'), '[1, 2', 0o644);
    const linked = path.join(home(), 'linked');
    mkdirSync(linked);
    symlinkSync(path.join(projects.broken, '.mcp.json'), path.join(linked, '.mcp.json'));

    const group = await ctl(['mcp', 'sources', 'add-project', projects.group]);
    expect(group).toMatchObject({ code: 7, stdout: '' });
    expect(group.stderr).toBe(`wispctl: ${projects.group} was not added: unsafe ${groupFile}: it is writable by group or others (mode 0664); nothing was read from it or written to it (fix or remove it, then try again) (UNSAFE_FILE)\n`);
    expect((await ctl(['mcp', 'sources', 'add-project', projects.world])).stderr).toContain('(mode 0646)');
    expect((await ctl(['mcp', 'sources', 'add-project', linked])).stderr).toContain(`unsafe ${path.join(linked, '.mcp.json')}: it is a symlink`);
    const broken = await ctl(['mcp', 'sources', 'add-project', projects.broken]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(new RegExp(`^wispctl: ${projects.broken} was not added: ${path.join(projects.broken, '.mcp.json')} is not valid JSON: .* \\(INVALID_CONFIG\\)\\n$`));
    // A file that is JSON but not a config: refused the same way.
    write(path.join(projects.broken, '.mcp.json'), { mcpServers: [] });
    expect((await ctl(['mcp', 'sources', 'add-project', projects.broken])).stderr).toContain('is unusable: mcpServers is not an object (INVALID_CONFIG)');

    expect((await client.call('sources.list')).projects).toEqual([]);
    const recorded = path.join(data, 'sources.json');
    expect(existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as { projects: string[] }).projects : []).toEqual([]);
    await stop(daemon, client);
    const again = await startWispd(data, { args: ['--config-dir', config] });
    const second = await again.connect();
    expect((await second.call('sources.list')).projects).toEqual([]);
    await stop(again, second);
  });
});
