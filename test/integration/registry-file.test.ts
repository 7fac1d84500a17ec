import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';

afterEach(killLeftovers);

describe('a bad mcp-servers.json on disk', () => {
  it.each([
    ['truncated', '{"schemaVersion":1,"services":[{"id":"a","na'],
    ['invalid', JSON.stringify({ schemaVersion: 1, services: [{ id: 'a', name: 'bad name!', command: '', args: [], cwd: null, enabled: false, configVersion: 1, createdAt: '', updatedAt: '' }] })],
    ['from the future', JSON.stringify({ schemaVersion: 99, services: [] })],
  ])('moves a %s file aside intact, reports it and starts empty', async (_kind, content) => {
    const home = tempDir();
    try {
      const file = path.join(home.path, 'mcp-servers.json');
      writeFileSync(file, content);
      const bad = await startWispd(home.path);
      const client = await bad.connect();
      const status = await client.call('daemon.status');
      expect(status.registryLoadError).toMatchObject({ movedTo: expect.stringContaining('mcp-servers.json.corrupt-') as string });
      expect(readFileSync(status.registryLoadError?.movedTo ?? '', 'utf8')).toBe(content);
      expect((await client.call('services.list')).services).toEqual([]);
      expect(bad.output()).toContain('moved it aside');
      // The daemon keeps working and writes a fresh file; the moved-aside one is untouched.
      await client.call('services.register', { name: 'fresh', command: '/bin/true' });
      expect(readdirSync(home.path).filter((n) => n.startsWith('mcp-servers.json')).sort()).toHaveLength(2);
      await client.close();
    } finally {
      home.remove();
    }
  });
});
