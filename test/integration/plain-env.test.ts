import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { activate, EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 44, item 2: an imported entry's plain `env` value (ROOT_DIR=/home/me/notes) joined the
// redactor, and an approval for /home/me/notes/todo.txt read [REDACTED:ROOT_DIR]/todo.txt: the
// human approved text other than what was sent. Only secrets are redacted now; a path or a
// setting under a name that names no secret is plain, and says so.

const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const home = tempDir();
const ROOT = path.join(home.path, 'me', 'notes');
const TOKEN = 'tok-plain-env-secret-5521';
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  client = await daemon.connect();
  log = await EventLog.follow(await daemon.connect());
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** Calls echo with `text`, approves it, and returns what the approval showed and what came back. */
async function approvedEcho(serviceId: string, text: string): Promise<{ shown: unknown; answer: string }> {
  await log.caughtUp();
  const asked = log.next((e) => e.type === 'approval.requested');
  const call = client.call('tools.call', { serviceId, toolName: 'echo', arguments: { text } });
  const event = await asked;
  if (event.type !== 'approval.requested') throw new Error('unexpected event');
  await client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  return { shown: event.approval.summary.arguments, answer: (await call).text };
}

describe('plain env values are not redacted; secrets still are', () => {
  it('an imported path is kept plain: the approval shows the argument exactly as it is sent, and the import says so', async () => {
    const content = JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [hostile, 'echo'], env: { ROOT_DIR: ROOT, LOG_LEVEL: 'production', API_TOKEN: TOKEN } } } });
    const result = await client.call('services.import', { content, file: 'notes.json', storage: 'session' });
    expect(result.imported.map((s) => s.name)).toEqual(['notes']);
    expect(result.imported[0]?.env).toEqual([
      { name: 'ROOT_DIR', storage: 'session', plain: true },
      { name: 'LOG_LEVEL', storage: 'session', plain: true },
      { name: 'API_TOKEN', storage: 'session' },
    ]);
    expect(result.warnings).toContain(
      'notes: ROOT_DIR, LOG_LEVEL are kept as plain values (a path, a number or a setting), not redacted: an approval shows arguments holding them as they are sent. ' +
        'A secret among them? Set it again: wispctl mcp env set notes ROOT_DIR',
    );
    const service = await activate(client, 'notes');
    const file = `${ROOT}/todo.txt in production`;
    const { shown, answer } = await approvedEcho(service.id, file);
    expect(shown).toEqual({ text: file });
    expect(answer).toBe(file);
    // The secret beside them is still a secret.
    const secret = await approvedEcho(service.id, `token ${TOKEN}`);
    expect(secret.shown).toEqual({ text: 'token [REDACTED:API_TOKEN]' });
    expect(secret.answer).toBe('token [REDACTED:API_TOKEN]');
  });

  it('wispctl shows which values are plain; mcp env set makes one a secret again (or plain with --plain)', async () => {
    const show = await runWispctl(['--socket', daemon.socket, 'mcp', 'show', 'notes']);
    expect(show.stdout).toContain('ROOT_DIR (session, plain: not redacted)');
    expect(show.stdout).toContain('API_TOKEN (session)');
    const set = await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'set', '--session', 'notes', 'ROOT_DIR'], { input: `${ROOT}\n` });
    expect(set.code).toBe(0);
    const list = await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'list', 'notes']);
    expect(list.stdout).toMatch(/ROOT_DIR\s+session\s+yes/);
    expect(list.stdout).toMatch(/LOG_LEVEL\s+session\s+no \(plain: not redacted\)/);
    const service = await activate(client, 'notes');
    expect((await approvedEcho(service.id, `${ROOT}/todo.txt`)).shown).toEqual({ text: '[REDACTED:ROOT_DIR]/todo.txt' });
    const plain = await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'set', '--session', '--plain', 'notes', 'ROOT_DIR'], { input: `${ROOT}\n` });
    expect(plain.code).toBe(0);
    const again = await activate(client, 'notes');
    expect((await approvedEcho(again.id, `${ROOT}/todo.txt`)).shown).toEqual({ text: `${ROOT}/todo.txt` });
  });
});
