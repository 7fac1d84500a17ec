import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Item 13 of issue 12: one line {"type":"task","at":"...","task":{"id":"a"}} in a transcript
// made wispd refuse to start. Every persisted record is now checked on read; a bad one is
// skipped or moved aside (intact) with a log line and a storage.warning event naming the file.

afterEach(killLeftovers);

type Warning = Extract<WispEvent, { type: 'storage.warning' }>;

async function warnings(client: WispClient): Promise<Warning[]> {
  const seen: WispEvent[] = [];
  client.onEvent((e) => seen.push(e));
  await client.call('events.subscribe', { since: 0 });
  // The replay is sent before the subscribe reply; one more round trip flushes it for certain.
  await client.call('daemon.status');
  return seen.filter((e): e is Warning => e.type === 'storage.warning');
}

async function withDaemon(prepare: (dataDir: string) => void, check: (daemon: RunningDaemon, client: WispClient, dataDir: string) => Promise<void>): Promise<void> {
  const home = tempDir();
  try {
    prepare(home.path);
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
    const client = await daemon.connect();
    await check(daemon, client, home.path);
    await client.call('daemon.shutdown');
    await daemon.exited;
  } finally {
    home.remove();
  }
}

const SESSION = '11111111-2222-4333-8444-555555555555';
const at = '2025-01-01T00:00:00.000Z';
const goodTask = { id: 't1', sessionId: SESSION, state: { status: 'completed', finishReason: 'stop' }, startedAt: at, endedAt: at, rounds: 1, tools: [] };

describe('bad persisted records never stop the daemon', () => {
  it('a transcript too long for one reply: sessions.get answers with the newest messages and counts the rest', async () => {
    const file = (dir: string) => path.join(dir, 'sessions', `${SESSION}.jsonl`);
    const big = 'x'.repeat(40_000);
    const lines = [{ type: 'session', id: SESSION, title: 'long', createdAt: at }];
    for (let i = 0; i < 40; i++) lines.push({ type: 'message', taskId: 't1', at, message: { role: 'user', content: `${i} ${big}` } } as never);
    await withDaemon(
      (dir) => {
        mkdirSync(path.join(dir, 'sessions'), { recursive: true, mode: 0o700 });
        writeFileSync(file(dir), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, { mode: 0o600 });
      },
      async (_daemon, client) => {
        const got = await client.call('sessions.get', { id: SESSION });
        expect(got.omittedMessages).toBeGreaterThan(0);
        expect(got.omittedMessages + got.messages.length).toBe(40);
        expect(got.messages.at(-1)?.content?.startsWith('39 ')).toBe(true);
        expect(Buffer.byteLength(JSON.stringify(got))).toBeLessThan(1024 * 1024);
      },
    );
  });

  it('a transcript line that fails the record schema is skipped with a warning; the session and its good lines load', async () => {
    const file = (dir: string) => path.join(dir, 'sessions', `${SESSION}.jsonl`);
    const lines = [
      { type: 'session', id: SESSION, title: 'kept', createdAt: at },
      { type: 'message', taskId: 't1', at, message: { role: 'user', content: 'hello' } },
      { type: 'task', at, task: { id: 'a' } },
      { type: 'message', taskId: 't1', at, message: { role: 'assistant' } },
      { type: 'task', at, task: goodTask },
    ];
    const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\nnot json at all\n`;
    await withDaemon(
      (dir) => {
        mkdirSync(path.join(dir, 'sessions'), { recursive: true, mode: 0o700 });
        writeFileSync(file(dir), text, { mode: 0o600 });
      },
      async (daemon, client, dir) => {
        const got = await client.call('sessions.get', { id: SESSION });
        expect(got.session.title).toBe('kept');
        expect(got.messages).toEqual([{ role: 'user', content: 'hello' }]);
        expect(got.tasks).toEqual([goodTask]);
        const seen = await warnings(client);
        expect(seen.map((w) => w.problem)).toEqual([
          expect.stringMatching(/^line 3 fails its schema: \/task .*skipped$/),
          expect.stringMatching(/^line 4 fails its schema.*skipped$/),
          expect.stringMatching(/^line 6 is not valid JSON.*skipped$/),
        ]);
        expect(seen.every((w) => w.file === file(dir) && w.movedTo === null)).toBe(true);
        expect(daemon.output()).toContain(`${file(dir)}: line 3 fails its schema`);
        // The file itself is untouched.
        expect(readFileSync(file(dir), 'utf8')).toBe(text);
      },
    );
  });

  it.each([
    ['garbage', 'garbage {'],
    ['a wrong shape', JSON.stringify({ schemaVersion: 1, model: { baseUrl: 42 } })],
  ])('a settings.json of %s is moved aside intact, the defaults apply, the daemon starts', async (_kind, content) => {
    await withDaemon(
      (dir) => writeFileSync(path.join(dir, 'settings.json'), content, { mode: 0o600 }),
      async (daemon, client, dir) => {
        expect((await client.call('model.getSettings')).settings.baseUrl).toMatch(/deepseek/);
        const [warning, ...rest] = await warnings(client);
        expect(rest).toEqual([]);
        expect(warning).toMatchObject({ file: path.join(dir, 'settings.json'), movedTo: expect.stringContaining(path.join(dir, 'settings.json.bad-')) });
        expect(warning?.problem).not.toContain(content.slice(0, 8));
        expect(readFileSync(warning?.movedTo ?? '', 'utf8')).toBe(content);
        expect(daemon.output()).toContain('settings.json');
        // A change writes a fresh file; the moved one stays.
        await client.call('model.setSettings', { model: 'deepseek-chat' });
        expect(readdirSync(dir).filter((n) => n.startsWith('settings.json')).sort()).toHaveLength(2);
      },
    );
  });

  it('a garbage sources.json is moved aside; one with some bad entries keeps the good ones', async () => {
    await withDaemon(
      (dir) => writeFileSync(path.join(dir, 'sources.json'), '\u0000\u0001garbage', { mode: 0o600 }),
      async (_daemon, client, dir) => {
        expect((await client.call('sources.list')).projects).toEqual([]);
        const [warning] = await warnings(client);
        expect(warning).toMatchObject({ file: path.join(dir, 'sources.json'), problem: expect.stringContaining('not valid JSON') });
        expect(readFileSync(warning?.movedTo ?? '', 'utf8')).toBe('\u0000\u0001garbage');
      },
    );
    const project = tempDir();
    try {
      const content = JSON.stringify({ schemaVersion: 1, projects: [project.path, 'relative/dir', 7] });
      await withDaemon(
        (dir) => writeFileSync(path.join(dir, 'sources.json'), content, { mode: 0o600 }),
        async (_daemon, client, dir) => {
          expect((await client.call('sources.list')).projects).toEqual([project.path]);
          const [warning] = await warnings(client);
          expect(warning).toMatchObject({ file: path.join(dir, 'sources.json'), problem: expect.stringContaining('2 project entries') });
          expect(readFileSync(warning?.movedTo ?? '', 'utf8')).toBe(content);
          expect(JSON.parse(readFileSync(path.join(dir, 'sources.json'), 'utf8'))).toMatchObject({ projects: [project.path] });
        },
      );
    } finally {
      project.remove();
    }
  });

  it('a garbage install record is moved aside; the good record still loads', async () => {
    const good = 'a'.repeat(32);
    const bad = 'b'.repeat(32);
    const wrongDigest = 'c'.repeat(32);
    const record = (digest: string) => ({
      schemaVersion: 1, digest, package: 'pkg', version: '1.0.0', bin: 'pkg', args: [], registry: 'https://registry.example', directory: `/x/${digest}`,
      status: 'failed', step: null, startedAt: at, endedAt: at, error: { code: 'INSTALL_FAILED', message: 'no' }, installScripts: [], lockedPackages: 0, npmPid: null,
      runtime: { node: '/usr/bin/node', nodeVersion: '20.0.0', npmVersion: '10.0.0' }, serviceId: null, serviceName: null, logTail: '',
    });
    await withDaemon(
      (dir) => {
        const installs = path.join(dir, 'mcp-installs');
        mkdirSync(installs, { recursive: true, mode: 0o700 });
        writeFileSync(path.join(installs, `${good}.json`), JSON.stringify(record(good)), { mode: 0o600 });
        writeFileSync(path.join(installs, `${bad}.json`), '{"schemaVersion":1,"digest":', { mode: 0o600 });
        writeFileSync(path.join(installs, `${wrongDigest}.json`), JSON.stringify(record(good)), { mode: 0o600 });
      },
      async (_daemon, client, dir) => {
        expect((await client.call('installs.list')).attempts.map((a) => a.digest)).toEqual([good]);
        const seen = await warnings(client);
        const installs = path.join(dir, 'mcp-installs');
        expect(seen.map((w) => w.file).sort()).toEqual([path.join(installs, `${bad}.json`), path.join(installs, `${wrongDigest}.json`)]);
        for (const w of seen) expect(w.movedTo).toContain('.json.bad-');
        expect(readFileSync(seen.find((w) => w.file.includes(bad))?.movedTo ?? '', 'utf8')).toBe('{"schemaVersion":1,"digest":');
      },
    );
  });

  it('a garbage mcp-servers.json: the daemon starts, the warning names the file and says where it went, loudly', async () => {
    await withDaemon(
      (dir) => writeFileSync(path.join(dir, 'mcp-servers.json'), '{"services": [garbage', { mode: 0o600 }),
      async (daemon, client, dir) => {
        const [warning] = await warnings(client);
        expect(warning).toMatchObject({ file: path.join(dir, 'mcp-servers.json'), problem: expect.stringContaining('EMPTY registry') });
        expect(readFileSync(warning?.movedTo ?? '', 'utf8')).toBe('{"services": [garbage');
        expect(daemon.output()).toContain('mcp-servers.json');
      },
    );
  });
});
