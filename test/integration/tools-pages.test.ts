import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { activate } from '../helpers/services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Replies are capped at the 1 MB frame (REPLY_TOO_LARGE past it), so a catalog of large
// schemas must come a page at a time: 60 tools of ~15 KB each are ~900 KB.
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
  await client.call('services.register', { name: 'big', command: process.execPath, args: [hostile, 'big-catalog', '60'] });
  expect((await activate(client, 'big')).connection).toMatchObject({ status: 'active', toolCount: 60 });
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('tools.list pages', () => {
  it('answers a page under 512 KB with a cursor, and the pages together hold every tool once', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.call('tools.list', cursor === undefined ? {} : { cursor });
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(512 * 1024 + 1024);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(1);
    expect(names.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `big-${i}`).sort());
  });

  it('wispctl mcp tools pages through all of them', async () => {
    const out = await runWispctl(['--socket', daemon.socket, '--json', 'mcp', 'tools', 'big']);
    expect(out.code).toBe(0);
    expect((JSON.parse(out.stdout) as unknown[]).length).toBe(60);
  });

  it('refuses a cursor that is not a count', async () => {
    await expect(client.call('tools.list', { cursor: 'abc' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });
});
