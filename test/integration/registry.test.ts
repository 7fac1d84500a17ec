import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispEvent } from '../../src/core/index.js';
import { WispError } from '../../src/core/index.js';
import { perTestHomes, startWispd } from '../helpers/wispd.js';

const home = perTestHomes(afterEach);

describe('service registry over the real socket', () => {
  it('registers, lists, edits and deletes a service, each persisted and disabled', async () => {
    const dataDir = home();
    const daemon = await startWispd(dataDir);
    const client = await daemon.connect();

    const { service } = await client.call('services.register', { name: 'echo', command: '/usr/bin/node', args: ['server.js', 'a b'], cwd: '/tmp' });
    expect(service).toMatchObject({ name: 'echo', command: '/usr/bin/node', args: ['server.js', 'a b'], cwd: '/tmp', enabled: false, configVersion: 1 });
    expect(service.id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await client.call('services.list');
    expect(listed.services.map((s) => s.name)).toEqual(['echo']);

    const edited = await client.call('services.update', { name: 'echo', set: { args: ['other.js'], cwd: null } });
    expect(edited.service).toMatchObject({ id: service.id, args: ['other.js'], cwd: null, enabled: false, configVersion: 2 });
    expect((await client.call('services.get', { id: service.id })).service.args).toEqual(['other.js']);

    const onDisk = JSON.parse(readFileSync(path.join(dataDir, 'mcp-servers.json'), 'utf8')) as { schemaVersion: number; services: unknown[] };
    expect(onDisk.schemaVersion).toBe(1);
    expect(onDisk.services).toEqual([expect.objectContaining({ id: service.id, args: ['other.js'], configVersion: 2 })]);

    const { deleted } = await client.call('services.delete', { name: 'echo' });
    expect(deleted).toEqual({ id: service.id, name: 'echo' });
    expect((await client.call('services.list')).services).toEqual([]);
    await expect(client.call('services.get', { name: 'echo' })).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
    await client.close();
  });

  it('refuses an edit bound to an old configVersion', async () => {
    const daemon = await startWispd(home());
    const client = await daemon.connect();
    const { service } = await client.call('services.register', { name: 'a', command: '/bin/true' });
    await client.call('services.update', { id: service.id, configVersion: 1, set: { args: ['x'] } });
    const error = await client.call('services.update', { id: service.id, configVersion: 1, set: { args: ['y'] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WispError);
    expect(error).toMatchObject({ code: 'VERSION_CONFLICT' });
    expect((await client.call('services.get', { id: service.id })).service.args).toEqual(['x']);
    await client.close();
  });

  it('shows each client the changes another client makes, as events in order', async () => {
    const daemon = await startWispd(home());
    const watcher = await daemon.connect();
    const editor = await daemon.connect();
    const seen: WispEvent[] = [];
    const threeEvents = new Promise<void>((resolve) =>
      watcher.onEvent((event) => {
        seen.push(event);
        if (seen.length === 3) resolve();
      }),
    );
    await watcher.call('events.subscribe', {});

    const { service } = await editor.call('services.register', { name: 'shared', command: '/bin/echo' });
    await editor.call('services.update', { name: 'shared', set: { name: 'renamed' } });
    await editor.call('services.delete', { id: service.id });
    await threeEvents;

    expect(seen.map((e) => e.type)).toEqual(['service.registered', 'service.updated', 'service.deleted']);
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(seen[1]).toMatchObject({ service: { name: 'renamed', enabled: false, configVersion: 2 } });
    expect(seen[2]).toMatchObject({ service: { id: service.id, name: 'renamed' } });
    await watcher.close();
    await editor.close();
  });

  it('keeps the registry across a restart, with every service disabled', async () => {
    const dataDir = home();
    const first = await startWispd(dataDir);
    const client = await first.connect();
    const a = (await client.call('services.register', { name: 'alpha', command: '/bin/cat' })).service;
    const b = (await client.call('services.register', { name: 'beta', command: 'node', args: ['--x'], cwd: '/' })).service;
    await client.call('services.update', { id: b.id, set: { args: ['--y'] } });
    await client.call('daemon.shutdown');
    expect(await first.exited).toEqual({ code: 0, signal: null });

    // Pretend a trusted service was persisted enabled: a restart must still come back disabled.
    const file = path.join(dataDir, 'mcp-servers.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { services: { enabled: boolean }[] };
    for (const s of doc.services) s.enabled = true;
    writeFileSync(file, JSON.stringify(doc));

    const second = await startWispd(dataDir);
    const again = await second.connect();
    const { services } = await again.call('services.list');
    expect(services.map((s) => [s.id, s.name, s.args, s.enabled, s.configVersion])).toEqual([
      [a.id, 'alpha', [], false, 1],
      [b.id, 'beta', ['--y'], false, 2],
    ]);
    const status = await again.call('daemon.status');
    expect(status.counts).toMatchObject({ services: 2, enabledServices: 0 });
    await again.close();
  });

  it('reports version, pid, paths and counts in daemon.status', async () => {
    const dataDir = home();
    const daemon = await startWispd(dataDir);
    const client = await daemon.connect();
    const status = await client.call('daemon.status');
    expect(status).toMatchObject({
      pid: daemon.pid,
      protocolVersion: '1',
      paths: { dataDir, socket: daemon.socket, registryFile: path.join(dataDir, 'mcp-servers.json') },
      counts: { services: 0, clients: 1, subscribers: 0 },
      registryLoadError: null,
    });
    expect(status.version).toBe((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version);
    await client.close();
  });

  it('stops cleanly on SIGTERM: exit 0, socket and locks removed', async () => {
    const dataDir = home();
    const daemon = await startWispd(dataDir);
    const client = await daemon.connect();
    await client.call('services.register', { name: 'kept', command: '/bin/true' });
    const closed = new Promise<void>((resolve) => client.onClose(() => resolve()));
    daemon.child.kill('SIGTERM');
    await closed;
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(daemon.socket)).toBe(false);
    expect(existsSync(path.join(dataDir, 'wispd.lock'))).toBe(false);
    expect(readFileSync(path.join(dataDir, 'mcp-servers.json'), 'utf8')).toContain('"kept"');
  });
});
