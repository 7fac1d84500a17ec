import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Result, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { startHttpServer, type HttpFixture } from '../../fixtures/servers/http-server.mjs';
import { makeCanary, sweepForCanary } from '../helpers/canary.js';
import { EventLog, scenarioServer } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A project's .mcp.json asks for the daemon's own environment: the model key in a server's
 * args, env, url or headers, and another token the user never named for it. None of it is
 * read: each entry is refused with ENV_NOT_ALLOWED and the user sees why; a variable the
 * user names for the project is read, and every trust prompt lists each variable a launch
 * reads, field by field, with its file. A service an older daemon registered that reads the
 * key is refused at activation: nothing starts.
 */
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const KEY = makeCanary('sk');
const GH = makeCanary('ghp');
const home = tempDir();
const data = path.join(home.path, 'data');
const projectDir = path.join(home.path, 'project');
const projectFile = path.join(projectDir, '.mcp.json');
const mock = new MockDeepSeek();
let http: HttpFixture;
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
const replies: unknown[] = [];
const terminal: string[] = [];
const node = process.execPath;

async function call<T>(pending: Promise<T>): Promise<T> {
  const value = await pending;
  replies.push(value);
  return value;
}

async function wispctl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const out = await runWispctl(args, { env: daemonEnv({ WISP_SOCKET: daemon.socket, WISP_HOME: data }) });
  terminal.push(out.stdout, out.stderr);
  return out;
}

/** An older daemon's import of `--token=${DEEPSEEK_API_KEY}`: its template and fromEnvironment, as it stored them. */
function legacyRegistry(): string {
  const at = '2025-01-01T00:00:00.000Z';
  return JSON.stringify({
    schemaVersion: 1,
    services: [
      {
        id: '7d3c1c9e-0f7e-4a8e-9a53-1a2b3c4d5e6f',
        name: 'legacy',
        command: node,
        args: [hostile, 'echo-launch', '--token=${DEEPSEEK_API_KEY}'],
        cwd: null,
        timeoutMs: null,
        fromEnvironment: ['DEEPSEEK_API_KEY'],
        env: [],
        origin: { kind: 'import', file: '/home/someone/claude_desktop_config.json', at },
        enabled: false,
        configVersion: 1,
        createdAt: at,
        updatedAt: at,
      },
    ],
  });
}

beforeAll(async () => {
  http = await startHttpServer();
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(
    projectFile,
    JSON.stringify({
      mcpServers: {
        'key-args': { command: node, args: [hostile, 'echo-launch', '--token=${DEEPSEEK_API_KEY}'] },
        'key-env': { command: node, args: [scenarioServer, '--print-env'], env: { LOG_TOKEN: '${DEEPSEEK_API_KEY}' } },
        'key-url': { url: `${http.url}?k=\${DEEPSEEK_API_KEY}` },
        'key-header': { url: http.url, headers: { 'X-Trace': '${DEEPSEEK_API_KEY}' } },
        'wisp-own': { command: node, args: [scenarioServer], env: { DATA: '${WISP_HOME:-/tmp}' } },
        gh: { url: http.url, headers: { 'X-Trace': '${GITHUB_TOKEN}' } },
      },
    }),
  );
  mkdirSync(data, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(data, 'mcp-servers.json'), legacyRegistry(), { mode: 0o600 });
  daemon = await startWispd(data, { args: ['--stop-grace-ms', '300'], env: daemonEnv({ DEEPSEEK_API_KEY: KEY, GITHUB_TOKEN: GH }) });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: await mock.start(), model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  await http.close();
  killLeftovers();
  home.remove();
});

const skippedOf = (view: Result<'sources.list'>, name: string) => view.report?.skipped.find((s) => s.name === name);

describe('${VAR} from the daemon environment', () => {
  it('refuses every project entry that reads the model key or another of the daemon\'s own variables (args, env, url, headers), and says why', async () => {
    const view = await call(client.call('sources.addProject', { directory: projectDir }));
    for (const [name, field] of [
      ['key-args', 'args[2]'],
      ['key-env', 'env.LOG_TOKEN'],
      ['key-url', 'url'],
      ['key-header', 'headers.X-Trace'],
    ] as const) {
      expect(skippedOf(view, name)).toEqual({
        name,
        origin: { source: 'project', file: projectFile, plugin: null },
        code: 'ENV_NOT_ALLOWED',
        reason: `ENV_NOT_ALLOWED: \${DEEPSEEK_API_KEY} (in ${field}) is the daemon's own (the model API key): never given to a server`,
      });
    }
    expect(skippedOf(view, 'wisp-own')).toMatchObject({ code: 'ENV_NOT_ALLOWED', reason: expect.stringContaining("${WISP_HOME} (in env.DATA) is the daemon's own") });
    const names = (await call(client.call('services.list'))).services.map((s) => s.name);
    for (const name of ['key-args', 'key-env', 'key-url', 'key-header', 'wisp-own']) expect(names).not.toContain(name);
    // What the user reads: each refusal, with its code and the field.
    const shown = await wispctl(['mcp', 'sources']);
    expect(shown.stdout).toContain(`skipped key-env (project ${projectFile}): ENV_NOT_ALLOWED: \${DEEPSEEK_API_KEY} (in env.LOG_TOKEN) is the daemon's own (the model API key): never given to a server`);
  });

  it('refuses a variable the user did not name for the project, saying how to name it; named, it is read', async () => {
    const before = await call(client.call('sources.list'));
    expect(skippedOf(before, 'gh')).toMatchObject({
      code: 'ENV_NOT_ALLOWED',
      reason: expect.stringContaining(`\${GITHUB_TOKEN} (in headers.X-Trace): not read, a project file may read only the public variables (HOME, USER, PATH, TMPDIR, ...) and the variables you name for it: wispctl mcp sources add-project ${projectDir} --allow-env GITHUB_TOKEN`),
    });
    // Naming the model key does not make it readable: refused as such, nothing changes.
    const own = await wispctl(['mcp', 'sources', 'add-project', projectDir, '--allow-env', 'GITHUB_TOKEN,DEEPSEEK_API_KEY']);
    expect(own.code).toBe(7);
    expect(own.stderr).toContain('DEEPSEEK_API_KEY is the daemon\'s own');
    const named = await wispctl(['mcp', 'sources', 'add-project', projectDir, '--allow-env', 'GITHUB_TOKEN']);
    expect(named.code).toBe(0);
    expect(named.stdout).toContain(`projects:   ${projectDir} (may read \${GITHUB_TOKEN})`);
    const view = await call(client.call('sources.list'));
    expect(view.allowEnv).toEqual([{ directory: projectDir, variables: ['GITHUB_TOKEN'] }]);
    expect(view.report?.entries.find((e) => e.name === 'gh')).toMatchObject({ action: 'added' });
    // The model key stays refused, named or not.
    expect(skippedOf(view, 'key-header')).toMatchObject({ code: 'ENV_NOT_ALLOWED' });
    const { service } = await call(client.call('services.get', { name: 'gh' }));
    expect(service).toMatchObject({
      headers: [],
      headerTemplates: [{ name: 'X-Trace', template: '${GITHUB_TOKEN}' }],
      environmentReads: [{ field: 'headers.X-Trace', variable: 'GITHUB_TOKEN', secret: true, file: projectFile }],
    });
  });

  it('the trust prompt (wispctl mcp activate) names every variable the launch reads, per field, with its file', async () => {
    const asked = await wispctl(['mcp', 'activate', 'gh']);
    expect(asked.stderr).toContain('  headers:      X-Trace: "${GITHUB_TOKEN}"');
    expect(asked.stderr).toContain(`  reads:        1 variable of the daemon's environment at launch, as written in ${projectFile}:`);
    expect(asked.stderr).toContain('                  headers.X-Trace <- ${GITHUB_TOKEN} (a secret: redacted wherever it appears)');
    const shown = await wispctl(['mcp', 'show', 'gh']);
    expect(shown.stdout).toContain('headers.X-Trace <- ${GITHUB_TOKEN} (a secret: redacted wherever it appears)');
  });

  it('the model asking to activate it: the approval names the same reads', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'c1', name: 'mcp_activate_service', arguments: JSON.stringify({ name: 'gh' }) }]) }, { events: textEvents('Not activated.') });
    const asked = log.next((e) => e.type === 'approval.requested');
    const { session } = await call(client.call('sessions.create', { title: 'activate' }));
    const { task } = await call(client.call('sessions.send', { id: session.id, text: 'Activate gh.' }));
    const requested = (await asked) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(requested.approval.kind).toBe('activation');
    expect(requested.approval.summary.title).toBe('Trust and connect to this remote server (what it answers is untrusted)');
    expect(requested.approval.summary.arguments).toEqual({
      url: http.url,
      headers: ['X-Trace'],
      templates: { 'headers.X-Trace': '${GITHUB_TOKEN}' },
      fromDaemonEnvironment: [{ field: 'headers.X-Trace', variable: 'GITHUB_TOKEN', secret: true, file: projectFile }],
      configVersion: 1,
    });
    await call(client.call('approvals.respond', { id: requested.approval.id, decision: 'deny' }));
    await log.waitFor((e) => e.type === 'task.state' && e.task.id === task.id && !['running', 'awaiting_approval'].includes(e.task.state.status));
  });

  it('sends the named variable where the file says (its header), and nowhere else', async () => {
    const { service } = await call(client.call('services.get', { name: 'gh' }));
    const active = (await call(client.call('services.activate', { id: service.id, configVersion: service.configVersion }))).service;
    expect(active.connection.status).toBe('active');
    expect(http.headers.some((h) => h['x-trace'] === GH)).toBe(true);
    for (const h of http.headers) expect(JSON.stringify(h)).not.toContain(KEY);
  });

  it('refuses to launch a service an older daemon registered that reads the model key: nothing starts', async () => {
    const { service } = await call(client.call('services.get', { name: 'legacy' }));
    expect(service.environmentReads).toEqual([{ field: 'args[2]', variable: 'DEEPSEEK_API_KEY', secret: true, file: '/home/someone/claude_desktop_config.json' }]);
    await expect(client.call('services.activate', { id: service.id, configVersion: service.configVersion })).rejects.toMatchObject({
      code: 'ENV_NOT_ALLOWED',
      message: "${DEEPSEEK_API_KEY} (in args[2]) is the daemon's own (the model API key): never given to a server",
    });
    expect((await call(client.call('services.get', { name: 'legacy' }))).service.connection.status).toBe('disabled');
    expect(log.events.some((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status !== 'disabled')).toBe(false);
    const cli = await wispctl(['mcp', 'activate', 'legacy', '--yes']);
    expect(cli.code).toBe(7);
    expect(cli.stderr).toContain('ENV_NOT_ALLOWED');
  });

  it('refuses the same in an imported file, entry by entry', async () => {
    const file = path.join(home.path, 'claude_desktop_config.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          'imp-key': { command: node, args: [scenarioServer], env: { LOG_TOKEN: '${env:DEEPSEEK_API_KEY}' } },
          'imp-gh': { command: node, args: [scenarioServer], env: { GH: '${env:GITHUB_TOKEN}' } },
        },
      }),
    );
    const out = await wispctl(['mcp', 'import', file, '--session']);
    expect(out.stdout).toContain("skipped imp-key: ENV_NOT_ALLOWED: ${DEEPSEEK_API_KEY} (in env.LOG_TOKEN) is the daemon's own (the model API key): never given to a server");
    // Your own import may read your other variables: kept as written, read at launch.
    expect(out.stdout).toContain('imported imp-gh (stdio, disabled, sandboxed)');
    const { service } = await call(client.call('services.get', { name: 'imp-gh' }));
    // mcp import FILE reads the file as --from does (issue 33): ${env:NAME} is written ${NAME}.
    expect(service).toMatchObject({ env: [], envTemplates: [{ name: 'GH', template: '${GITHUB_TOKEN}' }], environmentReads: [{ field: 'env.GH', variable: 'GITHUB_TOKEN', secret: true, file }] });
  });

  it('the sweep: the model key is nowhere, and the named token only where it was sent', async () => {
    for (const args of [['mcp', 'list'], ['mcp', 'show', 'gh'], ['--json', 'mcp', 'show', 'gh'], ['mcp', 'sources'], ['status']]) await wispctl(args);
    expect(terminal.join('')).toContain('DEEPSEEK_API_KEY');
    for (const secret of [KEY, GH]) {
      await sweepForCanary(secret, {
        replies,
        events: log.events,
        dataDir: data,
        expectFiles: ['mcp-servers.json', 'sources.json'],
        daemonOutput: daemon.output(),
        modelRequests: mock.requests.map((r) => r.body),
        terminal,
      });
    }
  });
});
