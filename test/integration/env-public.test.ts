import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { EventLog, scenarioServer } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A public variable of the daemon's environment is not a secret. A project's .mcp.json
 * with `${HOME}/docs` in its args and `HOME_DIR: ${HOME}` in its env, and an imported
 * `${env:HOME}`: status, `mcp show`, every trust prompt, tool results and a call's approval
 * show the real home path, never `[REDACTED:...]`, so the human approves the text that is
 * sent. (The home path used to join the redactor as HOME and HOME_DIR.)
 */
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const root = tempDir();
const userHome = path.join(root.path, 'user-home');
const data = path.join(userHome, 'wisp-data');
const projectDir = path.join(userHome, 'project');
const projectFile = path.join(projectDir, '.mcp.json');
const notes = path.join(userHome, 'docs', 'notes.txt');
const mock = new MockDeepSeek();
let daemon: RunningDaemon;
let client: WispClient;
let human: WispClient | undefined;
let log: EventLog;
const terminal: string[] = [];
const node = process.execPath;

async function wispctl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const out = await runWispctl(args, { env: daemonEnv({ HOME: userHome, WISP_SOCKET: daemon.socket, WISP_HOME: data }) });
  terminal.push(out.stdout, out.stderr);
  return out;
}

beforeAll(async () => {
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(
    projectFile,
    JSON.stringify({
      mcpServers: {
        launcher: { command: node, args: [hostile, 'echo-launch', '${HOME}/docs'] },
        docs: { command: node, args: [scenarioServer, '--print-env'], env: { HOME_DIR: '${HOME}', DOCS: '${env:HOME}/docs' } },
      },
    }),
  );
  mkdirSync(data, { recursive: true, mode: 0o700 });
  daemon = await startWispd(data, { args: ['--stop-grace-ms', '300'], env: daemonEnv({ HOME: userHome, DEEPSEEK_API_KEY: 'sk-public-test-key-123' }) });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: await mock.start(), model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
  await client.call('sources.addProject', { directory: projectDir });
});

afterAll(async () => {
  await human?.close();
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  root.remove();
});

describe('a public ${VAR} is no secret', () => {
  it('status, mcp show and mcp list show the real home path, and name each variable read as public', async () => {
    const status = await wispctl(['status']);
    expect(status.stdout).toContain(data);
    const show = await wispctl(['mcp', 'show', 'docs']);
    expect(show.stdout).toContain(`cwd:      ${projectDir}`);
    expect(show.stdout).toContain('env:      HOME_DIR="${HOME}", DOCS="${env:HOME}/docs"');
    expect(show.stdout).toContain(`reads:    2 variables of the daemon's environment at launch, as written in ${projectFile}:`);
    expect(show.stdout).toContain('            env.HOME_DIR <- ${HOME} (public: shown as it is)');
    const list = await wispctl(['mcp', 'list']);
    expect(list.code).toBe(0);
    expect(terminal.join('')).not.toContain('[REDACTED');
  });

  it('the trust prompt (wispctl mcp activate) shows the path and the templates as they are', async () => {
    const asked = await wispctl(['mcp', 'activate', 'launcher']);
    expect(asked.stderr).toContain(`  args:         ${hostile} echo-launch "\${HOME}/docs"`);
    expect(asked.stderr).toContain(`  cwd:          ${projectDir}`);
    expect(asked.stderr).toContain('                  args[2] <- ${HOME} (public: shown as it is)');
    expect(asked.stderr).not.toContain('[REDACTED');
  });

  it('the model asking to activate it: the approval shows the real cwd and names each variable read', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'c1', name: 'mcp_activate_service', arguments: JSON.stringify({ name: 'docs' }) }]) }, { events: textEvents('Activated.') });
    const asked = log.next((e) => e.type === 'approval.requested');
    const { session } = await client.call('sessions.create', { title: 'activate' });
    const { task } = await client.call('sessions.send', { id: session.id, text: 'Activate docs.' });
    const requested = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(requested.approval.summary.arguments).toEqual({
      command: node,
      args: [scenarioServer, '--print-env'],
      cwd: projectDir,
      env: ['HOME_DIR', 'DOCS'],
      templates: { 'env.HOME_DIR': '${HOME}', 'env.DOCS': '${env:HOME}/docs' },
      fromDaemonEnvironment: [
        { field: 'env.HOME_DIR', variable: 'HOME', secret: false, file: projectFile },
        { field: 'env.DOCS', variable: 'HOME', secret: false, file: projectFile },
      ],
      // Where it will run: its sandbox, path by path (issue 34).
      sandbox: { status: 'on', read: [], write: [], net: { mode: 'none' } },
      sees: expect.arrayContaining([`read-write ${projectDir} (cwd)`, 'network: none']) as unknown,
      configVersion: 1,
    });
    await client.call('approvals.respond', { id: requested.approval.id, decision: 'approve' });
    const ended = (await log.waitFor(
      (e) => e.type === 'task.state' && e.task.id === task.id && !['running', 'awaiting_approval'].includes(e.task.state.status),
    )) as Extract<WispEvent, { type: 'task.state' }>;
    expect(ended.task.state.status).toBe('completed');
  });

  it('tool results and a call\'s approval show the real path: what the human approves is what is sent', async () => {
    const person = await daemon.connect();
    human = person;
    const approvals: Extract<WispEvent, { type: 'approval.requested' }>[] = [];
    person.onEvent((event) => {
      if (event.type !== 'approval.requested') return;
      approvals.push(event);
      void person.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
    });
    await person.call('events.subscribe', {});
    // Active since the model's activation; activated here when that test did not get so far.
    let docs = (await client.call('services.get', { name: 'docs' })).service;
    if (docs.connection.status !== 'active') docs = (await client.call('services.activate', { id: docs.id, configVersion: docs.configVersion })).service;
    expect(docs.connection.status).toBe('active');
    const env = await client.call('tools.call', { serviceId: docs.id, toolName: 'env-values', arguments: {} });
    expect(env.text).toContain(`"HOME_DIR":"${userHome}"`);
    expect(env.text).toContain(`"DOCS":"${userHome}/docs"`);
    expect(env.text).not.toContain('sk-public-test-key-123');
    const echoed = await client.call('tools.call', { serviceId: docs.id, toolName: 'echo', arguments: { text: notes } });
    expect(echoed.text).toContain(notes);
    expect(approvals.find((a) => a.approval.summary.toolName === 'echo')?.approval.summary.arguments).toEqual({ text: notes });
    const { service: launcher } = await client.call('services.get', { name: 'launcher' });
    await client.call('services.activate', { id: launcher.id, configVersion: launcher.configVersion });
    const argv = await client.call('tools.call', { serviceId: launcher.id, toolName: 'argv', arguments: {} });
    expect(argv.text).toContain(`${userHome}/docs`);
    expect(JSON.stringify([env, echoed, argv, approvals])).not.toContain('[REDACTED');
  });

  it('an imported ${env:HOME} is kept as written and read at launch: the path never becomes a secret', async () => {
    const file = path.join(userHome, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: { 'imp-home': { command: node, args: [scenarioServer, '--print-env'], env: { HOME_DIR: '${env:HOME}' } } } }));
    const out = await wispctl(['mcp', 'import', file, '--session']);
    expect(out.stdout).toContain('imported imp-home (stdio, disabled, sandboxed)');
    const { service } = await client.call('services.get', { name: 'imp-home' });
    // mcp import FILE reads the file as --from does (issue 33): ${env:NAME} is written ${NAME}.
    expect(service).toMatchObject({ env: [], envTemplates: [{ name: 'HOME_DIR', template: '${HOME}' }], environmentReads: [{ field: 'env.HOME_DIR', variable: 'HOME', secret: false, file }] });
    await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    const env = await client.call('tools.call', { serviceId: service.id, toolName: 'env-values', arguments: {} });
    expect(env.text).toContain(`"HOME_DIR":"${userHome}"`);
    const status = await wispctl(['status']);
    expect(status.stdout).toContain(data);
    const show = await wispctl(['mcp', 'show', 'imp-home']);
    expect(show.stdout).toContain(`reads:    1 variable of the daemon's environment at launch, as written in ${file}:`);
    const events = JSON.stringify(log.events);
    expect(events).toContain(projectDir);
    expect(events).not.toContain('[REDACTED');
    expect(terminal.join('')).not.toContain('[REDACTED');
  });
});
