import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir } from '../helpers/wispd.js';

/**
 * Issue 14: wispd keeps V8's young generation small (src/daemon/heap-flags.ts, set by
 * bin/wispd.js at run time). With V8's defaults, an activation's allocation burst grows it to
 * two 16 MB semi-spaces (32 MB of resident memory); the daemon keeps it at its initial size.
 * A preload records the heap's spaces when the daemon exits.
 */

const home = tempDir();
const server = path.join(repoRoot, 'fixtures', 'servers', 'scenario-server.mjs');
const preload = path.join(home.path, 'heap-record.mjs');
const MB = 1024 * 1024;

afterAll(() => {
  killLeftovers();
  home.remove();
});

const PRELOAD = `
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';
const file = process.env.WISP_HEAP_RECORD;
process.once('exit', () => writeFileSync(file, JSON.stringify(v8.getHeapSpaceStatistics())));
`;

describe('the daemon heap', () => {
  it('keeps the young generation at its initial size through an activation of 32 tools and 300 approved calls', async () => {
    writeFileSync(preload, PRELOAD);
    const record = path.join(home.path, 'spaces.json');
    const env = daemonEnv({ NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, WISP_HEAP_RECORD: record });
    const daemon = await startWispd(path.join(home.path, 'data'), { env });
    const client = await daemon.connect();
    const { service } = await client.call('services.register', { name: 'heap', command: process.execPath, args: [server, '--tools', '30'] });
    const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(active.connection.status).toBe('active');
    client.onEvent((event) => {
      if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    });
    await client.call('events.subscribe', { types: ['approval.requested'] });
    const caller = await daemon.connect();
    for (let i = 0; i < 300; i++) {
      const result = await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: `h${i}` } });
      expect(result.content).toEqual([{ type: 'text', text: `h${i}` }]);
    }
    await client.call('daemon.shutdown');
    expect((await daemon.exited).code).toBe(0);
    const spaces = JSON.parse(readFileSync(record, 'utf8')) as { space_name: string; space_size: number }[];
    const young = spaces.find((s) => s.space_name === 'new_space');
    // Two 1 MB semi-spaces (V8 11-12 report 2 MB); V8's defaults grow it to 32 MB here.
    expect(young?.space_size).toBeLessThanOrEqual(4 * MB);
  });
});
