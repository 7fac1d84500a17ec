import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Item 15 of issue 12: `wispctl mcp add <the id of docs> -- /usr/bin/true` was accepted, and
// `wispctl mcp remove <that string>` then removed docs; `docs` and `DOCS` could coexist.

const home = tempDir();
const project = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
const cli = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
  project.remove();
});

describe('service names', () => {
  it('a name with the form of an id is refused (INVALID_CONFIG), on add and on rename; the id still reaches only its service', async () => {
    const docs = (await client.call('services.register', { name: 'docs', command: '/usr/bin/true' })).service;
    const added = await cli('mcp', 'add', docs.id, '--', '/usr/bin/true');
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('INVALID_CONFIG');
    await expect(client.call('services.register', { name: docs.id.toUpperCase(), command: '/usr/bin/true' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(client.call('services.register', { name: '00000000-0000-0000-0000-000000000000', command: '/usr/bin/true' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    const other = (await client.call('services.register', { name: 'other', command: '/usr/bin/true' })).service;
    await expect(client.call('services.update', { id: other.id, set: { name: docs.id } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect((await client.call('services.list')).services.map((s) => s.name)).toEqual(['docs', 'other']);
    // Asked as a name, the id string is no service's name: docs is not touched.
    await expect(client.call('services.delete', { name: docs.id })).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
    expect((await client.call('services.get', { name: 'docs' })).service.id).toBe(docs.id);
    await client.call('services.delete', { id: other.id });
  });

  it('names are unique regardless of case (SERVICE_NAME_TAKEN), a rename of the same service to another case is fine', async () => {
    await expect(client.call('services.register', { name: 'DOCS', command: '/usr/bin/true' })).rejects.toMatchObject({ code: 'SERVICE_NAME_TAKEN' });
    const added = await cli('mcp', 'add', 'Docs', '--', '/usr/bin/true');
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('SERVICE_NAME_TAKEN');
    const second = (await client.call('services.register', { name: 'second', command: '/usr/bin/true' })).service;
    await expect(client.call('services.update', { id: second.id, set: { name: 'Docs' } })).rejects.toMatchObject({ code: 'SERVICE_NAME_TAKEN' });
    expect((await client.call('services.update', { id: second.id, set: { name: 'Second' } })).service.name).toBe('Second');
    await client.call('services.delete', { id: second.id });
    expect((await client.call('services.list')).services.map((s) => s.name)).toEqual(['docs']);
  });

  it('config sources and imports follow the same rules: an id-shaped or case-twin entry is skipped with its reason', async () => {
    const imported = await client.call('services.import', {
      content: JSON.stringify({ mcpServers: { '12345678-1234-1234-1234-123456789abc': { command: '/usr/bin/true' }, DOCS: { command: '/usr/bin/true' }, fine: { command: '/usr/bin/true' } } }),
      storage: 'session',
    });
    expect(imported.imported.map((s) => s.name)).toEqual(['fine']);
    expect(imported.skipped).toEqual([
      { name: '12345678-1234-1234-1234-123456789abc', reason: expect.stringContaining('form of a service id') },
      { name: 'DOCS', reason: expect.stringContaining('SERVICE_NAME_TAKEN'), code: 'SERVICE_NAME_TAKEN' },
    ]);
    writeFileSync(
      path.join(project.path, '.mcp.json'),
      JSON.stringify({ mcpServers: { 'abcdef01-2345-6789-abcd-ef0123456789': { command: '/usr/bin/true' }, Fine: { command: '/usr/bin/true' }, proj: { command: '/usr/bin/true' } } }),
    );
    const sources = await client.call('sources.addProject', { directory: project.path });
    const report = sources.report;
    expect(report?.skipped).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'abcdef01-2345-6789-abcd-ef0123456789', reason: expect.stringContaining('form of a service id') })]));
    expect(report?.entries).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Fine', action: 'skipped', reason: expect.stringContaining('fine') })]));
    expect((await client.call('services.list')).services.map((s) => s.name).sort()).toEqual(['docs', 'fine', 'proj']);
  });
});

describe('a registry written before the naming rules', () => {
  it('starts, warns about the id-shaped name, and never lets `wispctl mcp remove <that id>` act on the wrong service', async () => {
    const legacy = tempDir();
    try {
      const docsId = '0b6f8c1e-2d3a-4f5b-9c7d-1e2f3a4b5c6d';
      const twinId = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
      const at = '2025-01-01T00:00:00.000Z';
      const service = (id: string, name: string) => ({ id, name, command: '/usr/bin/true', args: [], cwd: null, env: [], enabled: false, configVersion: 1, createdAt: at, updatedAt: at });
      mkdirSync(legacy.path, { recursive: true });
      writeFileSync(path.join(legacy.path, 'mcp-servers.json'), JSON.stringify({ schemaVersion: 1, services: [service(docsId, 'docs'), service(twinId, docsId), service('5a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', 'DOCS')] }), {
        mode: 0o600,
      });
      const old = await startWispd(legacy.path, { args: ['--stop-grace-ms', '300'] });
      const c = await old.connect();
      const seen: WispEvent[] = [];
      c.onEvent((e) => seen.push(e));
      await c.call('events.subscribe', { since: 0 });
      await c.call('daemon.status');
      const warnings = seen.flatMap((e) => (e.type === 'storage.warning' ? [e.problem] : []));
      expect(warnings).toEqual([expect.stringContaining(`"${docsId}" (${twinId}) has the form of a service id`), expect.stringContaining('differ only in case')]);

      const removed = await runWispctl(['--socket', old.socket, 'mcp', 'remove', docsId]);
      expect(removed.code).not.toBe(0);
      expect(removed.stderr).toContain('ambiguous');
      expect((await c.call('services.list')).services.map((s) => s.name)).toEqual(['docs', docsId, 'DOCS']);
      // Exact names still reach exactly their service.
      expect((await c.call('services.get', { name: 'DOCS' })).service.name).toBe('DOCS');
      await c.call('daemon.shutdown');
      await old.exited;
    } finally {
      legacy.remove();
    }
  });
});
