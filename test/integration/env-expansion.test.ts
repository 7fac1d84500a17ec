import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { makeCanary, sweepForCanary } from '../helpers/canary.js';
import { EventLog, pidOf } from '../helpers/services.js';
import { daemonEnv, killLeftovers, onLinux, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A project's .mcp.json asks for the daemon's own DEEPSEEK_API_KEY in a server's argv. The
 * key may reach that child at launch (the human trusted the template), and nowhere else:
 * not mcp-servers.json, not events, not replies, not the log, not wispctl's output.
 */
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const KEY = makeCanary('sk');
const TEMPLATE = '--token=${DEEPSEEK_API_KEY}';
const home = tempDir();
const data = path.join(home.path, 'data');
const projectDir = path.join(home.path, 'project');
const mock = new MockDeepSeek();
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
const replies: unknown[] = [];

async function call<T>(pending: Promise<T>): Promise<T> {
  const value = await pending;
  replies.push(value);
  return value;
}

beforeAll(async () => {
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(path.join(projectDir, '.mcp.json'), JSON.stringify({ mcpServers: { launcher: { command: process.execPath, args: [hostile, 'echo-launch', TEMPLATE] } } }));
  daemon = await startWispd(data, { args: ['--stop-grace-ms', '300'], env: daemonEnv({ DEEPSEEK_API_KEY: KEY }) });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: await mock.start(), model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

describe('${VAR} from the daemon environment', () => {
  let service: Service;

  it('keeps the template in mcp-servers.json, events, replies and the trust data, naming where the value comes from', async () => {
    const view = await call(client.call('sources.addProject', { directory: projectDir }));
    expect(view.report?.entries.find((e) => e.name === 'launcher')).toMatchObject({ action: 'added' });
    service = (await call(client.call('services.get', { name: 'launcher' }))).service;
    expect(service.args).toEqual([hostile, 'echo-launch', TEMPLATE]);
    expect(service.fromEnvironment).toEqual(['DEEPSEEK_API_KEY']);
    expect(service.enabled).toBe(false);
    const registered = await log.waitFor((e) => e.type === 'service.registered' && e.service.name === 'launcher');
    expect(JSON.stringify(registered)).toContain(TEMPLATE);
    const file = readFileSync(path.join(data, 'mcp-servers.json'), 'utf8');
    expect(file).toContain(JSON.stringify(TEMPLATE).slice(1, -1));
    expect(file).not.toContain(KEY);
    for (const event of log.events) expect(JSON.stringify(event)).not.toContain(KEY);
    expect(JSON.stringify(service)).not.toContain(KEY);
  });

  it('the trust prompt (the model asking to activate it) shows the template and says the value comes from the daemon environment', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'c1', name: 'mcp_activate_service', arguments: JSON.stringify({ name: 'launcher' }) }]) }, { events: textEvents('Activated.') });
    const asked = log.next((e) => e.type === 'approval.requested');
    const { session } = await call(client.call('sessions.create', { title: 'activate' }));
    const { task } = await call(client.call('sessions.send', { id: session.id, text: 'Activate launcher.' }));
    const requested = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(requested.approval.kind).toBe('activation');
    expect(requested.approval.summary.arguments).toMatchObject({ args: [hostile, 'echo-launch', TEMPLATE], fromDaemonEnvironment: ['DEEPSEEK_API_KEY'] });
    expect(JSON.stringify(requested)).not.toContain(KEY);
    await call(client.call('approvals.respond', { id: requested.approval.id, decision: 'approve' }));
    const ended = (await log.waitFor(
      (e) => e.type === 'task.state' && e.task.id === task.id && !['running', 'awaiting_approval'].includes(e.task.state.status),
    )) as Extract<WispEvent, { type: 'task.state' }>;
    expect(ended.task.state.status).toBe('completed');
    // The model's request carried the key in its header (it is the model's key), never in a body.
    for (const request of mock.requests) expect(JSON.stringify(request.body)).not.toContain(KEY);
  });

  it('hands the expanded value to the child at launch, and redacts it when the server echoes it back', async () => {
    const active = (await call(client.call('services.activate', { id: service.id, configVersion: service.configVersion }))).service;
    expect(active.connection.status).toBe('active');
    expect(active.args).toEqual([hostile, 'echo-launch', TEMPLATE]);
    const human = await daemon.connect();
    human.onEvent((event) => {
      if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
    });
    await human.call('events.subscribe', {});
    const result = await call(client.call('tools.call', { serviceId: service.id, toolName: 'argv', arguments: {} }));
    // Not the template: the child really got a value, and it comes back redacted.
    expect(result.text).toContain('--token=[REDACTED:DEEPSEEK_API_KEY]');
    expect(result.text).not.toContain('${DEEPSEEK_API_KEY}');
    await human.close();
  });

  it.runIf(onLinux)('the child\'s command line holds the expanded value (read from /proc)', async () => {
    const active = (await call(client.call('services.activate', { id: service.id, configVersion: service.configVersion }))).service;
    expect(readFileSync(`/proc/${pidOf(active)}/cmdline`, 'utf8').split('\0')).toContain(`--token=${KEY}`);
  });

  it('the sweep: the key is nowhere but in the child', async () => {
    const env = daemonEnv({ WISP_SOCKET: daemon.socket, WISP_HOME: data });
    const terminal: string[] = [];
    for (const args of [['mcp', 'list'], ['mcp', 'show', 'launcher'], ['--json', 'mcp', 'show', 'launcher'], ['mcp', 'sources']]) {
      const out = await runWispctl(args, { env });
      terminal.push(out.stdout, out.stderr);
    }
    expect(terminal.join('')).toContain('DEEPSEEK_API_KEY');
    await sweepForCanary(KEY, {
      replies,
      events: log.events,
      dataDir: data,
      expectFiles: ['mcp-servers.json', 'audit.jsonl'],
      daemonOutput: daemon.output(),
      modelRequests: mock.requests.map((r) => r.body),
      terminal,
    });
  });
});
