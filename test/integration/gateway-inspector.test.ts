import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, WispEvent } from '../../src/core/index.js';
import { inspectorLauncher } from '../../scripts/npm12-runtime.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 16: the MCP Inspector (`@modelcontextprotocol/inspector`, a client this project did
 * not write), in its CLI mode, lists and calls tools through `wispctl mcp serve` over stdio
 * (issue 35: and lists and reads resources, lists and gets prompts).
 * The call waits for an approval, which the test answers from a second socket connection,
 * as a human at `wispctl approvals` would. The Inspector needs Node 22.19+: the node of
 * ensureNpm12(); it is installed on first use into .cache/ (scripts/npm12-runtime.mjs).
 */

const home = tempDir();
const CANARY = `inspector-canary-${process.pid}-7f3a9c`;
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;
let node22: string;
let launcher: string;
let echoName: string;

beforeAll(async () => {
  [node22, launcher] = await Promise.all([ensureNpm12().then((bin) => path.join(bin, 'node')), inspectorLauncher()]);
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await registerScenario(client, 'tools');
  await activate(client, 'tools');
  echoName = 'tools__echo';
  // A server with resources and prompts (issue 35), its canary a session secret the daemon knows.
  const { service } = await client.call('services.register', { name: 'notes', command: process.execPath, args: [path.join(repoRoot, 'fixtures', 'servers', 'offer-server.mjs')] });
  const set = await client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'CANARY', value: CANARY, storage: 'session' }] });
  expect((await client.call('services.activate', { id: service.id, configVersion: set.service.configVersion })).service.connection.status).toBe('active');
}, NPM12_SETUP_MS + 300_000);
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** The Inspector's CLI on `wispctl mcp serve` (stdio): its one JSON result on stdout, its exit status. */
function inspector(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const target = [process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'];
  return new Promise((resolve) => {
    // HOME: the Inspector keeps a catalog and secrets under ~/.mcp-inspector; not the user's.
    const child = spawn(node22, [launcher, '--cli', '--format', 'json', '-q', ...target, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home.path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The next approval for echo with these arguments, answered from this (second) connection. */
async function answerNextEcho(text: string, decision: 'approve' | 'deny'): Promise<Approval> {
  const requested = (await events.next(
    (e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'echo' && JSON.stringify(e.approval.summary.arguments) === JSON.stringify({ text }),
  )) as Extract<WispEvent, { type: 'approval.requested' }>;
  await client.call('approvals.respond', { id: requested.approval.id, decision });
  return requested.approval;
}

describe('the MCP Inspector (CLI mode) through wispctl mcp serve', () => {
  it('tools/list: the active tools as SERVICE__TOOL, marked as the server\'s, with input schemas', async () => {
    const run = await inspector('--method', 'tools/list');
    expect(run.code, run.stderr).toBe(0);
    const { result } = JSON.parse(run.stdout) as { result: { tools: { name: string; description: string; inputSchema: unknown }[] } };
    const echo = result.tools.find((tool) => tool.name === echoName);
    expect(echo?.description).toMatch(/^\[from server tools\] /);
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(result.tools.map((tool) => tool.name)).not.toContain('echo');
  }, 120_000);

  it('tools/call, approved from a second socket connection: the tool\'s answer; the approval names the Inspector', async () => {
    const answered = answerNextEcho('hello from the inspector', 'approve');
    const run = await inspector('--method', 'tools/call', '--tool-name', echoName, '--tool-arg', 'text=hello from the inspector');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ result: { content: [{ type: 'text', text: 'hello from the inspector' }] } });
    expect(run.stdout).not.toContain('"isError":true');
    const approval = await answered;
    expect(approval.summary.serviceName).toBe('tools');
    // The gateway's connection is named after the Inspector's clientInfo.
    expect(approval.requester.clientId).toMatch(/^client-\d+ \(mcp:[^)]*inspector[^)]*\)$/i);
  }, 120_000);

  it('resources/list and resources/read: the service\'s resources under wisp:// URIs, labelled; a read redacted of the secret', async () => {
    const listed = await inspector('--method', 'resources/list');
    expect(listed.code, listed.stderr).toBe(0);
    const { result } = JSON.parse(listed.stdout) as { result: { resources: { uri: string; title?: string }[] } };
    expect(result.resources.find((r) => r.uri === 'wisp://notes/notes://today')).toMatchObject({ title: '[from server notes] Today' });
    const read = await inspector('--method', 'resources/read', '--uri', 'wisp://notes/notes://today');
    expect(read.code, read.stderr).toBe(0);
    const body = JSON.parse(read.stdout) as { result: { contents: { uri: string; text: string }[] } };
    expect(body.result.contents[0]?.uri).toBe('wisp://notes/notes://today');
    expect(body.result.contents[0]?.text).toMatch(/^today: the key is \[REDACTED[^\]]*\], keep it$/);
    expect(read.stdout).not.toContain(CANARY);
  }, 120_000);

  it('prompts/list and prompts/get: SERVICE__NAME, the arguments filled, the messages redacted, the image a marker', async () => {
    const listed = await inspector('--method', 'prompts/list');
    expect(listed.code, listed.stderr).toBe(0);
    const { result } = JSON.parse(listed.stdout) as { result: { prompts: { name: string; arguments?: { name: string; required?: boolean }[] }[] } };
    expect(result.prompts.find((p) => p.name === 'notes__summarize')?.arguments).toEqual([expect.objectContaining({ name: 'topic', required: true })]);
    const got = await inspector('--method', 'prompts/get', '--prompt-name', 'notes__summarize', '--prompt-args', 'topic=sessions');
    expect(got.code, got.stderr).toBe(0);
    const body = JSON.parse(got.stdout) as { result: { messages: { role: string; content: { type: string; text?: string } }[] } };
    expect(body.result.messages.map((m) => [m.role, m.content.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'text'],
    ]);
    expect(body.result.messages[0]?.content.text).toMatch(/^Summarize sessions\. The key is \[REDACTED[^\]]*\]\.$/);
    expect(body.result.messages[1]?.content.text).toMatch(/^\[omitted by Wisp: image image\/png, 300 bytes\]$/);
    expect(got.stdout).not.toContain(CANARY);
  }, 120_000);

  it('tools/call, denied: an isError result naming APPROVAL_DENIED, and the tool never ran', async () => {
    const answered = answerNextEcho('not this one', 'deny');
    const run = await inspector('--method', 'tools/call', '--tool-name', echoName, '--tool-arg', 'text=not this one');
    await answered;
    const body = JSON.parse(run.stdout === '' ? run.stderr : run.stdout) as { result?: { isError?: boolean; content: { text: string }[] } };
    expect(body.result?.isError).toBe(true);
    expect(body.result?.content[0]?.text).toContain('APPROVAL_DENIED');
    expect(body.result?.content[0]?.text).not.toContain('not this one');
  }, 120_000);
});
