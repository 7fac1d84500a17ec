import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { activate, EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 33: after `mcp connect claude-code`, Wisp's own gateway entry imported and activated
// looped on tool-list updates (about 1,000 events in 18 s, wispd at 87% CPU). The fixture is
// that loop: each tools/list the server answers is followed by a list_changed. The bound:
// at most 10 refreshes in any 2 s (LIMITS.maxToolRefreshesPerWindow, toolRefreshWindowMs);
// past it, one refresh when the window allows; held back for 6 s, the service fails.
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
  log = await EventLog.follow(client);
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** Registers and activates a list-flood server recording into its own directory; resolves with its id and that directory. */
async function flooding(name: string, rounds: string): Promise<{ id: string; dir: string; lists: () => number[] }> {
  const dir = path.join(home.path, `${name}-record`);
  mkdirSync(dir);
  // It records each tools/list in the test's directory: granted, read-write.
  const { service } = await client.call('services.register', { name, command: process.execPath, args: [hostile, 'list-flood', dir, rounds], sandbox: { enabled: true, read: [], write: [dir], net: { mode: 'none' } } });
  expect((await activate(client, name)).connection.status).toBe('active');
  const lists = () =>
    readFileSync(path.join(dir, 'lists.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { at: number }).at);
  return { id: service.id, dir, lists };
}

/** The tightest span of 11 consecutive tools/list requests after the first (the activation's), in ms. */
function tightest(at: number[]): number {
  const refreshes = at.slice(1);
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 10 < refreshes.length; i++) min = Math.min(min, (refreshes[i + 10] as number) - (refreshes[i] as number));
  return min;
}

describe('a server that floods tools/list_changed', () => {
  it('is refreshed at most 10 times in 2 s: the rest are coalesced into a refresh when the window allows, and the latest list is the one offered', async () => {
    const { id, lists } = await flooding('loop-25', '25');
    // Wait, event by event, for the list that follows the 25th change.
    const latest = async () => (await client.call('tools.list', { serviceId: id })).tools.find((t) => t.name === 'mutable')?.description;
    for (;;) {
      const next = log.next((e) => e.type === 'service.tools' && e.service.id === id);
      if ((await latest()) === 'version 25') break;
      await next;
    }
    const at = lists();
    expect(at).toHaveLength(26);
    // 2 s on the daemon's clock; the server sees the requests a little later each, never 1 s sooner.
    expect(tightest(at)).toBeGreaterThan(1000);
    expect((await client.call('services.get', { id })).service.connection).toMatchObject({ status: 'active' });
    await client.call('services.delete', { id });
  });

  it('fails with LIMIT_EXCEEDED once it keeps outrunning the bound (6 s held back), and offers no tools', async () => {
    const { id, lists } = await flooding('loop-forever', 'forever');
    let refreshed = 0;
    // Before, it never ended: give up at 150 refreshes (the bound allows about 40 before it fails).
    const failed = (await log.waitFor(
      (e) => (e.type === 'service.tools' && e.service.id === id && ++refreshed > 150) || (e.type === 'service.state' && e.service.id === id && e.connection.status === 'failed'),
    )) as Extract<WispEvent, { type: 'service.state' }>;
    expect(failed.connection).toMatchObject({ status: 'failed', code: 'LIMIT_EXCEEDED', message: expect.stringContaining('notifications/tools/list_changed') });
    const at = lists();
    expect(tightest(at)).toBeGreaterThan(1000);
    // About 10 per 2 s for the 6 s or so it ran: nowhere near the 1,000 in 18 s of the loop.
    expect(at.length).toBeLessThan(80);
    expect((await client.call('tools.list', { serviceId: id })).tools).toEqual([]);
  });
});
