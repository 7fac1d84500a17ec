import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { human, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

/**
 * What `wispctl mcp serve` offers follows the daemon: a tool held by its pin (its server
 * changed it after the first call, fixtures/servers/rug-server.mjs) leaves the list until a
 * human accepts it, and --defer-tools (never the tool count) switches between the catalog and the
 * search/execute pair; each change is announced with notifications/tools/list_changed. Its
 * list is in one order whatever order the services were started in.
 */
const rugServer = path.join(repoRoot, 'fixtures', 'servers', 'rug-server.mjs');
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let rug: Service;
let gateway: GatewayClient;

async function listed(): Promise<string[]> {
  return (await gateway.client.listTools()).tools.map((tool) => tool.name);
}

async function modelNames(): Promise<Record<string, string>> {
  const { tools } = await admin.call('tools.list', { serviceId: rug.id });
  return Object.fromEntries(tools.map((tool) => [tool.name, `${tool.serviceName}__${tool.name}`]));
}

/** The tools the search tool finds for `query`, in a gateway started with --defer-tools. */
async function deferredSearch(query: string): Promise<string[]> {
  const deferred = await stdioGateway(daemon.socket, ['--defer-tools'], { name: 'catalog-deferred' });
  try {
    const found = await deferred.client.callTool({ name: 'mcp_search_tools', arguments: { query } });
    const content = found.content as { type: string; text?: string }[];
    return (JSON.parse(content[0]?.text ?? '') as { tools: { tool: string }[] }).tools.map((hit) => hit.tool).sort();
  } finally {
    await deferred.close();
  }
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await human(await daemon.connect(), () => 'approve');
  // Its state file is the test's: unsandboxed, as the sandbox is not what this tests.
  await admin.call('services.register', { name: 'rug', command: process.execPath, args: [rugServer, '--change', 'description', '--state', path.join(home.path, 'rug.state')], sandbox: NO_SANDBOX });
  rug = await activate(admin, 'rug');
  gateway = await stdioGateway(daemon.socket, [], { name: 'catalog-test' });
});

afterAll(async () => {
  await gateway.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('what wispctl mcp serve offers follows the daemon', () => {
  it('drops a tool held by its pin, with list_changed, and offers it again once accepted', async () => {
    const names = await modelNames();
    const readNotes = names.read_notes as string;
    const countNotes = names.count_notes as string;
    expect((await listed()).sort()).toEqual([countNotes, readNotes].sort());

    // The first call runs; the server then changes read_notes's description: held.
    const held = log.waitFor((e) => e.type === 'tools.held' && e.serviceName === 'rug');
    const dropped = gateway.nextListChanged();
    const first = await gateway.client.callTool({ name: readNotes, arguments: {} });
    expect(first.isError).not.toBe(true);
    const event = (await held) as Extract<WispEvent, { type: 'tools.held' }>;
    expect(event.changed).toEqual(['read_notes']);
    await dropped;
    expect((await admin.call('tools.list', { serviceId: rug.id })).tools.find((t) => t.name === 'read_notes')?.pin).toBe('changed');
    expect(await listed()).toEqual([countNotes]);
    const refused = await gateway.client.callTool({ name: readNotes, arguments: {} });
    expect(refused.isError).toBe(true);
    expect(await deferredSearch('notes')).toEqual(['count_notes']);

    // Accepted by a human: offered again, announced.
    const back = gateway.nextListChanged();
    const review = await admin.call('tools.review', { serviceId: rug.id });
    await admin.call('tools.accept', { serviceId: rug.id, toolListVersion: review.toolListVersion, tools: review.tools.map((t) => ({ name: t.name, digest: t.digest })) });
    await back;
    expect((await listed()).sort()).toEqual([countNotes, readNotes].sort());
  });

  it('lists the tools in one order, by name code unit by code unit, whatever order their services were activated in', async () => {
    await registerScenario(admin, 'Zulu', ['--tools', '2']);
    await registerScenario(admin, 'alpha', ['--tools', '2']);
    try {
      await activate(admin, 'Zulu');
      await activate(admin, 'alpha');
      const before = (await gateway.client.listTools()).tools;
      // Zulu stopped and started again: the daemon's catalog now has it after alpha.
      await admin.call('services.disable', { name: 'Zulu' });
      await activate(admin, 'Zulu');
      const after = (await gateway.client.listTools()).tools;
      expect(JSON.stringify(after)).toBe(JSON.stringify(before));
      const names = after.map((tool) => tool.name);
      expect(names).toHaveLength(10); // echo, env, tool-0 and tool-1 of each, and rug's two
      // By code unit (what Array.prototype.sort does): "Z" before "a", where a locale's collation has it last.
      expect(names).toEqual([...names].sort());
      expect(names.slice(0, 5)).toEqual(['Zulu__echo', 'Zulu__env', 'Zulu__tool-0', 'Zulu__tool-1', 'alpha__echo']);
    } finally {
      await admin.call('services.delete', { name: 'alpha' });
      await admin.call('services.delete', { name: 'Zulu' });
    }
  });

  it('keeps the whole list whatever the model\'s deferToolsAbove says: search and execute only with --defer-tools', async () => {
    const before = (await admin.call('model.getSettings')).settings.deferToolsAbove;
    const all = (await listed()).sort();
    expect(all).toHaveLength(2);
    try {
      await admin.call('model.setSettings', { deferToolsAbove: 1 });
      // tools/list reads the daemon's catalog afresh: what it answers now is what the setting would have made it.
      expect((await listed()).sort()).toEqual(all);
    } finally {
      await admin.call('model.setSettings', { deferToolsAbove: before });
    }
    const deferred = await stdioGateway(daemon.socket, ['--defer-tools'], { name: 'catalog-defer-flag' });
    try {
      expect((await deferred.client.listTools()).tools.map((tool) => tool.name)).toEqual(['mcp_search_tools', 'mcp_execute_tool']);
    } finally {
      await deferred.close();
    }
  });
});
