import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { GatewayProfile, Service } from '../../src/core/index.js';
import { human, httpGateway, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35, profiles: named sets of services kept by a real daemon, made and changed with
 * wispctl as a user would, and served by `wispctl mcp serve --profile NAME` to the official
 * SDK Client over stdio: it sees only the profile's tools, resources and prompts, and what is
 * outside fails exactly as with --services.
 */
const offerServer = path.join(repoRoot, 'fixtures', 'servers', 'offer-server.mjs');
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;

async function offerService(name: string): Promise<Service> {
  const { service } = await admin.call('services.register', { name, command: process.execPath, args: [offerServer] });
  const activated = (await admin.call('services.activate', { id: service.id, configVersion: service.configVersion })).service;
  expect(activated.connection.status).toBe('active');
  return activated;
}

function ctl(...args: string[]) {
  return runWispctl(['--socket', daemon.socket, ...args]);
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

async function rejection(pending: Promise<unknown>): Promise<McpError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return error;
}

async function profile(name: string): Promise<GatewayProfile | undefined> {
  return (await admin.call('profiles.list')).profiles.find((p) => p.name === name);
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  await human(await daemon.connect(), () => 'approve');
  for (const name of ['notes', 'more', 'other']) await offerService(name);
});

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp profile', () => {
  it('add, list, show, edit and remove a profile; bad names, unknown services and missing profiles get their codes, and nothing is written', async () => {
    const added = await ctl('mcp', 'profile', 'add', 'work', '--services', 'notes,more', '--description', 'for work');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('added profile work');
    expect(added.stdout).toContain('services: notes, more');

    const badName = await ctl('mcp', 'profile', 'add', 'a.b', '--services', 'notes');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('must be 1-32 characters from A-Z a-z 0-9 _ -, starting with a letter or digit (INVALID_PARAMS)');
    const unknown = await ctl('mcp', 'profile', 'add', 'play', '--services', 'notes,nope');
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('no service with name nope');
    expect(unknown.stderr).toContain('(SERVICE_NOT_FOUND)');
    const taken = await ctl('mcp', 'profile', 'add', 'work', '--services', 'notes');
    expect(taken.code).toBe(5);
    expect(taken.stderr).toContain('(PROFILE_EXISTS)');

    const list = await ctl('mcp', 'profile', 'list', '--json');
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as GatewayProfile[];
    expect(listed.map((p) => [p.name, p.description, p.services.map((s) => s.name), p.dropped])).toEqual([['work', 'for work', ['notes', 'more'], []]]);
    expect((await ctl('mcp', 'profile', 'ls')).stdout).toMatch(/^PROFILE +SERVICES +DROPPED +DESCRIPTION\nwork +notes,more +- +for work\n$/);

    const edited = await ctl('mcp', 'profile', 'edit', 'work', '--remove', 'more', '--add', 'other');
    expect(edited.code, edited.stderr).toBe(0);
    expect((await profile('work'))?.services.map((s) => s.name)).toEqual(['notes', 'other']);
    const replaced = await ctl('mcp', 'profile', 'edit', 'work', '--services', 'more', '--clear-description');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(await profile('work')).toMatchObject({ description: null, services: [{ name: 'more' }] });
    const emptied = await ctl('mcp', 'profile', 'edit', 'work', '--remove', 'more');
    expect(emptied.code).toBe(2);
    expect(emptied.stderr).toContain('a profile serves at least one service: remove the profile instead');
    const unknownEdit = await ctl('mcp', 'profile', 'edit', 'work', '--add', 'nope');
    expect(unknownEdit.code).toBe(4);
    expect((await profile('work'))?.services.map((s) => s.name)).toEqual(['more']);

    const show = await ctl('mcp', 'profile', 'show', 'work');
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('profile work\n  services: more\n');
    const removed = await ctl('mcp', 'profile', 'remove', 'work');
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('removed profile work');
    for (const args of [['show', 'work'], ['remove', 'work'], ['edit', 'work', '--add', 'notes']]) {
      const missing = await ctl('mcp', 'profile', ...args);
      expect(missing.code, args.join(' ')).toBe(4);
      expect(missing.stderr).toContain('(PROFILE_NOT_FOUND)');
    }
    expect((await admin.call('profiles.list')).profiles).toEqual([]);
  });
});

describe('wispctl mcp serve --profile', () => {
  let scoped: GatewayClient;
  let byName: GatewayClient;

  beforeAll(async () => {
    await admin.call('profiles.set', { name: 'work', create: true, services: ['notes'] });
    [scoped, byName] = await Promise.all([stdioGateway(daemon.socket, ['--profile', 'work'], { name: 'profiled' }), stdioGateway(daemon.socket, ['--services', 'notes'], { name: 'by-name' })]);
  });

  afterAll(async () => {
    await Promise.all([scoped.close(), byName.close()]);
    await admin.call('profiles.delete', { name: 'work' }).catch(() => undefined);
  });

  it('offers only the profile\'s tools, resources and prompts; one outside it fails as with --services', async () => {
    expect((await scoped.client.listTools()).tools.map((t) => t.name)).toEqual(['notes__noop']);
    const inside = await scoped.client.callTool({ name: 'notes__noop', arguments: {} });
    expect(text(inside)).not.toMatch(/^TOOL_NOT_FOUND/);
    const outside = await scoped.client.callTool({ name: 'more__noop', arguments: {} });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toBe(text(await byName.client.callTool({ name: 'more__noop', arguments: {} })));
    expect(text(outside)).toMatch(/^TOOL_NOT_FOUND: /);

    expect((await scoped.client.listResources()).resources.map((r) => r.uri).sort()).toEqual(['wisp://notes/notes://logo', 'wisp://notes/notes://today']);
    expect((await scoped.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['wisp://notes/notes://day/{day}']);
    expect((await scoped.client.readResource({ uri: 'wisp://notes/notes://today' })).contents.length).toBeGreaterThan(0);
    const unread = await rejection(scoped.client.readResource({ uri: 'wisp://more/notes://today' }));
    const unreadByName = await rejection(byName.client.readResource({ uri: 'wisp://more/notes://today' }));
    expect([unread.code, unread.message]).toEqual([unreadByName.code, unreadByName.message]);
    expect(unread.code).toBe(-32602);

    expect((await scoped.client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['notes__greet', 'notes__summarize']);
    const unprompted = await rejection(scoped.client.getPrompt({ name: 'more__greet' }));
    const unpromptedByName = await rejection(byName.client.getPrompt({ name: 'more__greet' }));
    expect([unprompted.code, unprompted.message]).toEqual([unpromptedByName.code, unpromptedByName.message]);
    expect(unprompted.message).toContain('no prompt named "more__greet" is offered by this server');
  });

  it('an edit reaches the connected client at once: list_changed, and the new set is what it lists and may call', async () => {
    const widened = scoped.nextListChanged();
    const edit = await ctl('mcp', 'profile', 'edit', 'work', '--add', 'more');
    expect(edit.code, edit.stderr).toBe(0);
    await widened;
    expect((await scoped.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['more__noop', 'notes__noop']);
    expect((await scoped.client.listPrompts()).prompts.map((p) => p.name)).toContain('more__greet');

    const narrowed = scoped.nextListChanged();
    await admin.call('profiles.set', { name: 'work', services: ['more'] });
    await narrowed;
    // A call by a name listed before the change is refused too: the gateway read the profile again.
    expect(text(await scoped.client.callTool({ name: 'notes__noop', arguments: {} }))).toMatch(/^TOOL_NOT_FOUND: /);
    expect((await scoped.client.listTools()).tools.map((t) => t.name)).toEqual(['more__noop']);
    expect((await scoped.client.listResources()).resources.every((r) => r.uri.startsWith('wisp://more/'))).toBe(true);

    // Removed: nothing is served (never every service).
    const gone = scoped.nextListChanged();
    await admin.call('profiles.delete', { name: 'work' });
    await gone;
    expect((await scoped.client.listTools()).tools).toEqual([]);
    expect((await scoped.client.listResources()).resources).toEqual([]);
    expect((await scoped.client.listPrompts()).prompts).toEqual([]);
  });

  it('a service deleted from the registry drops out of the profile, and one registered again under its name is not in it', async () => {
    await admin.call('profiles.set', { name: 'two', create: true, services: ['notes', 'other'] });
    const two = await stdioGateway(daemon.socket, ['--profile', 'two'], { name: 'two' });
    try {
      expect((await two.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__noop', 'other__noop']);
      const changed = two.nextListChanged();
      const deleted = await ctl('mcp', 'remove', 'other');
      expect(deleted.code, deleted.stderr).toBe(0);
      await changed;
      expect((await two.client.listTools()).tools.map((t) => t.name)).toEqual(['notes__noop']);
      const show = await ctl('mcp', 'profile', 'show', 'two');
      expect(show.stdout).toContain('services: notes\n  dropped (deleted since, no longer served): other\n');

      // The same name again is another service: the profile does not widen to it (active now, and not listed).
      await offerService('other');
      expect((await admin.call('tools.list', {})).tools.map((t) => t.serviceName)).toContain('other');
      expect((await two.client.listTools()).tools.map((t) => t.name)).toEqual(['notes__noop']);
      expect(text(await two.client.callTool({ name: 'other__noop', arguments: {} }))).toMatch(/^TOOL_NOT_FOUND: /);
      expect(await profile('two')).toMatchObject({ services: [{ name: 'notes' }], dropped: [{ name: 'other' }] });
      // The next edit forgets it.
      await admin.call('profiles.set', { name: 'two', add: ['more'] });
      expect(await profile('two')).toMatchObject({ services: [{ name: 'notes' }, { name: 'more' }], dropped: [] });
    } finally {
      await two.close();
      await admin.call('profiles.delete', { name: 'two' });
    }
  });

  it('--http --profile serves the profile too', async () => {
    await admin.call('profiles.set', { name: 'web', create: true, services: ['more'] });
    const served = await httpGateway(daemon.socket, ['--profile', 'web']);
    try {
      const client = await served.connect('http-profiled');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['more__noop']);
      expect(text(await client.callTool({ name: 'notes__noop', arguments: {} }))).toMatch(/^TOOL_NOT_FOUND: /);
      await client.close();
    } finally {
      await served.interrupt();
      await admin.call('profiles.delete', { name: 'web' });
    }
  });

  it('refuses --profile with --services or --service, and a profile the daemon does not have', async () => {
    for (const extra of [['--services', 'notes'], ['--service', 'notes']]) {
      const run = await ctl('mcp', 'serve', '--profile', 'work', ...extra);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--profile goes alone');
      expect(run.stdout).toBe('');
    }
    const unknown = await ctl('mcp', 'serve', '--profile', 'nope');
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('no profile named nope');
    expect(unknown.stderr).toContain('(PROFILE_NOT_FOUND)');
    expect(unknown.stdout).toBe('');
  });
});

describe('wispctl mcp connect-client --profile', () => {
  it('writes mcp serve --profile NAME as the entry wisp-NAME, beside the plain one; an unknown profile writes nothing', async () => {
    await admin.call('profiles.set', { name: 'work', create: true, services: ['notes'] });
    const userDir = tempDir();
    try {
      const userHome = userDir.path;
      const env = { PATH: process.env.PATH ?? '', HOME: userHome };
      const file = path.join(userHome, '.cursor', 'mcp.json');
      const unknown = await runWispctl(['--socket', daemon.socket, 'mcp', 'connect-client', 'cursor', '--profile', 'nope', '--yes'], { env });
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain('(PROFILE_NOT_FOUND)');
      expect(existsSync(file)).toBe(false);
      const plain = await runWispctl(['--socket', daemon.socket, 'mcp', 'connect-client', 'cursor', '--yes'], { env });
      expect(plain.code, plain.stderr).toBe(0);
      const run = await runWispctl(['--socket', daemon.socket, 'mcp', 'connect-client', 'cursor', '--profile', 'work', '--yes'], { env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`added mcpServers.wisp-work in ${file}`);
      const serve = [wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'];
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
        mcpServers: { wisp: { command: process.execPath, args: serve }, 'wisp-work': { command: process.execPath, args: [...serve, '--profile', 'work'] } },
      });
    } finally {
      userDir.remove();
      await admin.call('profiles.delete', { name: 'work' });
    }
  });
});

describe('a service renamed', () => {
  it('stays in its profiles, shown by its new name', async () => {
    await admin.call('profiles.set', { name: 'ren', create: true, services: ['more'] });
    try {
      await admin.call('services.update', { name: 'more', set: { name: 'extra' } });
      const show = await ctl('mcp', 'profile', 'show', 'ren');
      expect(show.stdout).toContain('profile ren\n  services: extra\n');
      expect(await profile('ren')).toMatchObject({ services: [{ name: 'extra' }], dropped: [] });
    } finally {
      await admin.call('services.update', { name: 'extra', set: { name: 'more' } }).catch(() => undefined);
      await admin.call('profiles.delete', { name: 'ren' });
    }
  });
});

describe('a profiles.json that cannot be used', () => {
  it('is refused with PROFILES_UNREADABLE by every profile command and by mcp serve --profile, and is never written over', async () => {
    const file = path.join(daemon.dataDir, 'profiles.json');
    const bad = '{"schemaVersion": 1, "profiles": [{"name": "work"';
    writeFileSync(file, bad, { mode: 0o600 });
    try {
      for (const args of [['mcp', 'profile', 'list'], ['mcp', 'profile', 'add', 'x', '--services', 'notes'], ['mcp', 'profile', 'remove', 'work'], ['mcp', 'serve', '--profile', 'work']]) {
        const run = await ctl(...args);
        expect(run.code, args.join(' ')).toBe(1);
        expect(run.stderr).toContain(`${file} is not valid JSON`);
        expect(run.stderr).toContain('(PROFILES_UNREADABLE)');
      }
      expect(readFileSync(file, 'utf8')).toBe(bad);
    } finally {
      writeFileSync(file, '{"schemaVersion": 1, "profiles": []}\n', { mode: 0o600 });
    }
    expect((await ctl('mcp', 'profile', 'list')).code).toBe(0);
  });

  it('at start: reported (log, storage.warning) and left as it is; the daemon starts', async () => {
    const other = tempDir();
    const file = path.join(other.path, 'profiles.json');
    const bad = '{"schemaVersion": 1, "profiles": [{"name": "a.b", "description": null, "services": []}]}';
    writeFileSync(file, bad, { mode: 0o600 });
    const second = await startWispd(other.path, { args: ['--socket', path.join(other.path, 'wispd.sock')] });
    try {
      const client = await second.connect();
      const warnings: string[] = [];
      client.onEvent((event) => {
        if (event.type === 'storage.warning') warnings.push(`${event.file}: ${event.problem}`);
      });
      await client.call('events.subscribe', { since: 0, types: ['storage.warning'] });
      await until('the storage.warning of profiles.json', () => warnings.length, (n) => n > 0);
      expect(warnings[0]).toContain(`${file}: fails its schema: /profiles/0/name`);
      expect(warnings[0]).toContain('left as it is; every profile request fails with PROFILES_UNREADABLE until it is fixed or removed');
      const run = await runWispctl(['--socket', second.socket, 'mcp', 'profile', 'list']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('(PROFILES_UNREADABLE)');
      expect(readFileSync(file, 'utf8')).toBe(bad);
      await client.call('daemon.shutdown');
      await second.exited;
    } finally {
      // This daemon only: the file's other tests share the first one.
      if (second.child.exitCode === null) second.child.kill('SIGKILL');
      other.remove();
    }
  });
});
