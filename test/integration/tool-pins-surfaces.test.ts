import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Result, Service, ToolInfo, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { EventLog, activate } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

/**
 * Issue 17, the other ways a change can reach someone: a manual refresh (`wispctl mcp
 * refresh`) that finds a changed definition holds it exactly as list_changed does, and the
 * model never reads a held tool's new text: not in its tools, not in `mcp_list_services`
 * (which counts held tools), not in the deferred search. Real daemon, real rug-server
 * processes, the mock DeepSeek API recording what the daemon sends the model.
 */
const rugServer = path.join(repoRoot, 'fixtures', 'servers', 'rug-server.mjs');
const home = tempDir();
const mock = new MockDeepSeek();
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let humanLog: EventLog;
/** The services: `loud` announces its change (list_changed), `quiet` does not (only a refresh finds it). */
let loud: Service;
let quiet: Service;

/** Words only the changed description has (and its hidden tag characters, U+E0000 and up). */
const NEW_TEXT = [/id_rsa/, /Before using it/, /[\u{E0000}-\u{E007F}]/u, /\u200b/];

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;
type Held = Extract<WispEvent, { type: 'tools.held' }>;

function heldEvent(serviceId: string): Promise<Held> {
  return humanLog.waitFor((e) => e.type === 'tools.held' && e.serviceId === serviceId) as Promise<Held>;
}

async function toolsOf(service: Service): Promise<ToolInfo[]> {
  return (await asker.call('tools.list', { serviceId: service.id })).tools;
}

async function toolOf(service: Service, name: string): Promise<ToolInfo> {
  const tool = (await toolsOf(service)).find((t) => t.name === name);
  if (tool === undefined) throw new Error(`${service.name} has no tool ${name}`);
  return tool;
}

/** A call of read_notes approved by the human as soon as it is asked: the server changes after it. */
async function firstCall(service: Service): Promise<string> {
  const asked = humanLog.next((e) => e.type === 'approval.requested' && e.approval.binding.serviceId === service.id);
  const call = asker.call('tools.call', { serviceId: service.id, toolName: 'read_notes', arguments: {} });
  await human.call('approvals.respond', { id: ((await asked) as Requested).approval.id, decision: 'approve' });
  return (await call).text;
}

async function countApprovals(): Promise<number> {
  return (await asker.call('approvals.list', { all: true })).approvals.length;
}

/** A review without what names the service (ids, model names): what two services holding the same change must share. */
function reviewed(review: Result<'tools.review'>): unknown[] {
  return review.tools.map(({ modelName: _modelName, ...rest }) => rest);
}

/** Runs one task of scripted model turns, approving every approval it asks; returns the requests the mock model received. */
async function task(turns: Parameters<MockDeepSeek['enqueue']>): Promise<(typeof mock.requests)[number][]> {
  const first = mock.requests.length;
  mock.enqueue(...turns);
  const approve = (event: WispEvent): void => {
    if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
  };
  const stop = human.onEvent(approve);
  try {
    const { session } = await asker.call('sessions.create', {});
    const { task: started } = await asker.call('sessions.send', { id: session.id, text: 'what can you use?' });
    const ended = (await humanLog.waitFor(
      (e) => e.type === 'task.state' && e.task.id === started.id && !['running', 'awaiting_approval'].includes(e.task.state.status),
    )) as Extract<WispEvent, { type: 'task.state' }>;
    expect(ended.task.state.status).toBe('completed');
    return mock.requests.slice(first);
  } finally {
    stop();
  }
}

/** The tool reply the model read in a request (its last message), parsed. */
function reply(request: (typeof mock.requests)[number] | undefined): unknown {
  const last = request?.body.messages?.at(-1);
  expect(last?.role).toBe('tool');
  return JSON.parse(String(last?.content));
}

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(path.join(home.path, 'data'), { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-pins-surfaces' }) });
  asker = await daemon.connect();
  human = await daemon.connect();
  humanLog = await EventLog.follow(human);
  await asker.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
  for (const [name, extra] of [['loud', []], ['quiet', ['--silent']]] as const) {
    // Its state file is the test's: unsandboxed, as the sandbox is not what this tests.
    await asker.call('services.register', { name, command: process.execPath, args: [rugServer, '--change', 'description', '--state', path.join(home.path, `${name}.state`), ...extra], sandbox: NO_SANDBOX });
  }
  loud = await activate(asker, 'loud');
  quiet = await activate(asker, 'quiet');
}, 60_000);

afterAll(async () => {
  await asker.call('daemon.shutdown').catch(() => undefined);
  await asker.close();
  await human.close();
  killLeftovers();
  await mock.stop();
  home.remove();
});

describe('a manual refresh', () => {
  it('holds a changed definition exactly as list_changed does', async () => {
    // loud: the change comes with list_changed.
    const loudHeld = heldEvent(loud.id);
    expect(await firstCall(loud)).toBe('read_notes ran');
    await loudHeld;

    // quiet: the same change, unannounced: nothing is held until someone looks again.
    expect(await firstCall(quiet)).toBe('read_notes ran');
    expect((await toolsOf(quiet)).map((t) => [t.name, t.pin])).toEqual([
      ['read_notes', 'trusted'],
      ['count_notes', 'trusted'],
    ]);
    const quietHeld = heldEvent(quiet.id);
    const refreshed = await runWispctl(['--socket', daemon.socket, 'mcp', 'refresh', 'quiet'], { env: daemonEnv() });
    expect(refreshed).toMatchObject({ code: 0, stderr: '' });
    // The server offers 2 tools; the one that changed is held, and the refresh says so.
    expect(refreshed.stdout).toMatch(/^quiet: active \(pid \d+, 2 tools, 1 held for review: wispctl mcp review quiet\)\n$/);
    expect(await quietHeld).toMatchObject({ serviceId: quiet.id, serviceName: 'quiet', added: [], changed: ['read_notes'] });

    // Held alike: listed as changed, refused before any approval, reviewed with the same diff and warnings.
    for (const service of [loud, quiet]) {
      const held = await toolOf(service, 'read_notes');
      expect(held.pin).toBe('changed');
      expect((await toolOf(service, 'count_notes')).pin).toBe('trusted');
      const before = await countApprovals();
      await expect(asker.call('tools.call', { modelName: held.modelName, arguments: {} })).rejects.toMatchObject({ code: 'TOOL_NOT_TRUSTED' });
      expect(await countApprovals()).toBe(before);
    }
    const [loudReview, quietReview] = await Promise.all([human.call('tools.review', { serviceId: loud.id }), human.call('tools.review', { serviceId: quiet.id })]);
    expect(quietReview.tools).toHaveLength(1);
    expect(quietReview.tools[0]).toMatchObject({ name: 'read_notes', pin: 'changed', changes: [{ path: '/description' }] });
    expect(quietReview.tools[0]?.warnings.map((w) => w.kind)).toEqual(['tag_characters', 'zero_width']);
    expect(reviewed(quietReview)).toEqual(reviewed(loudReview));
  }, 60_000);
});

describe('what the model reads of held tools', () => {
  it('is not offered them, and mcp_list_services counts them without their text', async () => {
    const heldNames = await Promise.all([loud, quiet].map(async (s) => (await toolOf(s, 'read_notes')).modelName));
    const requests = await task([{ events: toolCallEvents([{ id: 'l', name: 'mcp_list_services', arguments: '{}' }]) }, { events: textEvents('two services, two held tools') }]);
    expect(requests).toHaveLength(2);
    const offered = requests[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain((await toolOf(quiet, 'count_notes')).modelName);
    for (const name of heldNames) expect(offered).not.toContain(name);
    const { services } = reply(requests[1]) as { services: { name: string; state: string; tools: number; heldTools: number }[] };
    expect(services.map(({ name, state, tools, heldTools }) => ({ name, state, tools, heldTools }))).toEqual([
      { name: 'loud', state: 'active', tools: 1, heldTools: 1 },
      { name: 'quiet', state: 'active', tools: 1, heldTools: 1 },
    ]);
    // Nothing the daemon sent the model holds the new description: not the tools, not the reply.
    const sent = JSON.stringify(requests.map((r) => r.body));
    for (const pattern of NEW_TEXT) expect(sent).not.toMatch(pattern);
    // What it does send: the trusted tool's description (so the sweep above looked at real content).
    expect(sent).toContain('Counts your notes.');
  });

  it('does not find them in the deferred search, and cannot run them through execute', async () => {
    const { deferToolsAbove } = (await asker.call('model.getSettings')).settings;
    await asker.call('model.setSettings', { deferToolsAbove: 1 });
    try {
      const held = await toolOf(quiet, 'read_notes');
      const before = await countApprovals();
      const requests = await task([
        { events: toolCallEvents([{ id: 's', name: 'mcp_search_tools', arguments: JSON.stringify({ query: 'read notes ssh', limit: 20 }) }]) },
        { events: toolCallEvents([{ id: 'x', name: 'mcp_execute_tool', arguments: JSON.stringify({ name: held.modelName, arguments: {} }) }]) },
        { events: textEvents('only counting is possible') },
      ]);
      expect(requests).toHaveLength(3);
      expect(requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(['mcp_search_tools', 'mcp_execute_tool']));
      const found = (reply(requests[1]) as { tools: { name: string; service: string; tool: string }[] }).tools;
      // "notes" matches count_notes of both services; read_notes, held, is found in neither.
      expect(found.map((t) => [t.service, t.tool]).sort()).toEqual([
        ['loud', 'count_notes'],
        ['quiet', 'count_notes'],
      ]);
      expect(reply(requests[2])).toMatchObject({ error: { code: 'TOOL_NOT_FOUND' } });
      expect(await countApprovals()).toBe(before);
      const sent = JSON.stringify(requests.map((r) => r.body));
      for (const pattern of NEW_TEXT) expect(sent).not.toMatch(pattern);
    } finally {
      await asker.call('model.setSettings', { deferToolsAbove });
    }
  });
});
