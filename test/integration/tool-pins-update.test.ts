import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { activate, EventLog } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A package update under the same command: hello-mcp 1.0.0, then 1.1.0 (from the local
 * fixture registry, installed by the real npm into the same directory) whose greet tool
 * takes a new required argument. At the next activation the change is held.
 */
const run = promisify(execFile);
const home = tempDir();
const dataDir = path.join(home.path, 'data');
const dir = path.join(home.path, 'server');
const mock = new MockDeepSeek();
let npmBin: string;
let registry: LocalRegistry;
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;

async function npmInstall(spec: string): Promise<void> {
  const args = [path.join(npmBin, 'npm'), 'install', spec, '--registry', registry.url, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', '--cache', path.join(home.path, 'npm-cache'), '--userconfig', path.join(home.path, 'npmrc')];
  await run(path.join(npmBin, 'node'), args, { cwd: dir, env: { HOME: home.path, PATH: process.env.PATH } });
}

async function connect(): Promise<void> {
  daemon = await startWispd(dataDir, { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-update-test' }) });
  client = await daemon.connect();
  log = await EventLog.follow(client);
}

beforeAll(async () => {
  npmBin = await ensureNpm12();
  registry = await LocalRegistry.start();
  const hello = readFileSync(path.join(repoRoot, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
  const v1Schema = "properties: { name: { type: 'string' } }, required: ['name']";
  expect(hello).toContain(v1Schema);
  const updated = hello.replace(v1Schema, "properties: { name: { type: 'string' }, path: { type: 'string' } }, required: ['name', 'path']");
  await registry.publish({ name: '@fixture/case-lib', version: '2.1.0', files: { 'index.js': 'exports.upper = (s) => s.toUpperCase();\n' } });
  await registry.publish({
    name: 'greeting-lib',
    version: '1.4.0',
    dependencies: { '@fixture/case-lib': '^2.0.0' },
    files: { 'index.js': "const { upper } = require('@fixture/case-lib');\nexports.greet = (name) => `HELLO ${upper(name)}`;\n" },
  });
  await registry.publish({ name: 'hello-mcp', version: '1.0.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': hello } });
  await registry.publish({ name: 'hello-mcp', version: '1.1.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': updated } });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
  await npmInstall('hello-mcp@1.0.0');
  const url = await mock.start();
  await connect();
  await client.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
  await client.call('services.register', { name: 'hello', command: process.execPath, args: [path.join(dir, 'node_modules', 'hello-mcp', 'bin', 'hello.js')] });
}, NPM12_SETUP_MS + 120_000);

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await client.close();
  killLeftovers();
  await registry.close();
  await mock.stop();
  home.remove();
});

describe('tool pins and a package update', () => {
  it('holds a schema changed by a package update until it is accepted, across a restart', async () => {
    const service = await activate(client, 'hello');
    expect((await client.call('tools.list', { serviceId: service.id })).tools.map((t) => [t.name, t.pin])).toEqual([['greet', 'trusted']]);

    await npmInstall('hello-mcp@1.1.0');
    await client.call('services.disable', { name: 'hello' });
    const held = log.next((e) => e.type === 'tools.held');
    await activate(client, 'hello');
    const event = (await held) as Extract<WispEvent, { type: 'tools.held' }>;
    expect(event).toMatchObject({ serviceId: service.id, added: [], changed: ['greet'] });
    const greet = (await client.call('tools.list', { serviceId: service.id })).tools[0];
    expect(greet?.pin).toBe('changed');

    // Not given to the model, refused without an approval.
    const first = mock.requests.length;
    mock.enqueue({ events: textEvents('nothing') });
    const { session } = await client.call('sessions.create', {});
    const { task } = await client.call('sessions.send', { id: session.id, text: 'greet someone' });
    await log.waitFor((e) => e.type === 'task.state' && e.task.id === task.id && e.task.state.status === 'completed');
    expect(mock.requests[first]?.body.tools?.map((t) => t.function.name) ?? []).not.toContain(greet?.modelName);
    const approvals = (await client.call('approvals.list', { all: true })).approvals.length;
    await expect(client.call('tools.call', { serviceId: service.id, toolName: 'greet', arguments: { name: 'a', path: 'b' } })).rejects.toMatchObject({ code: 'TOOL_NOT_TRUSTED' });
    expect((await client.call('approvals.list', { all: true })).approvals).toHaveLength(approvals);

    const review = await client.call('tools.review', { serviceId: service.id });
    expect(review.tools).toHaveLength(1);
    expect(review.tools[0]).toMatchObject({
      name: 'greet',
      pin: 'changed',
      descriptionDiff: null,
      changes: [
        { path: '/inputSchema/properties/path', after: { type: 'string' } },
        { path: '/inputSchema/required/1', after: 'path' },
      ],
    });
    expect(review.tools[0]?.changes.every((c) => !('before' in c))).toBe(true);
    const shown = review.tools.map((t) => ({ name: t.name, digest: t.digest }));
    await expect(client.call('tools.accept', { serviceId: service.id, toolListVersion: review.toolListVersion - 1, tools: shown })).rejects.toMatchObject({ code: 'APPROVAL_STALE' });

    // The pins outlive the daemon: after a restart the update is still held.
    await client.call('daemon.shutdown');
    await daemon.exited;
    await client.close();
    await connect();
    const again = log.next((e) => e.type === 'tools.held');
    await activate(client, 'hello');
    expect(await again).toMatchObject({ changed: ['greet'] });
    const current = await client.call('tools.review', { serviceId: service.id });
    // The same definition as reviewed before the restart: its digest still binds it.
    expect(current.tools.map((t) => t.digest)).toEqual(shown.map((t) => t.digest));
    expect(await client.call('tools.accept', { serviceId: service.id, toolListVersion: current.toolListVersion, tools: shown })).toMatchObject({ accepted: ['greet'], stillHeld: 0 });

    const asked = log.next((e) => e.type === 'approval.requested');
    const call = client.call('tools.call', { serviceId: service.id, toolName: 'greet', arguments: { name: 'pins', path: '/tmp' } });
    await client.call('approvals.respond', { id: ((await asked) as Extract<WispEvent, { type: 'approval.requested' }>).approval.id, decision: 'approve' });
    expect((await call).text).toBe('HELLO PINS');
  }, 180_000);
});
