import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { perTestHomes, runWispdExpectingExit, startWispd } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

const home = perTestHomes(afterEach);
const isRoot = needs(process.getuid?.() === 0, 'not root: the tests of files another user made (they chown)');

/** A private data dir (0700), as the daemon would have made it, holding `files`. */
function dataDir(files: Record<string, string> = {}): string {
  const dir = path.join(home(), 'data');
  mkdirSync(dir, { mode: 0o700 });
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, name), content, { mode: 0o600 });
  }
  return dir;
}

const planted = JSON.stringify({ schemaVersion: 1, model: { baseUrl: 'http://127.0.0.1:9/attacker' } });

describe('only our own files are trusted', () => {
  it('refuses a pre-existing world-writable data dir, naming it, and neither changes its mode nor writes into it', async () => {
    const dir = path.join(home(), 'data');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    writeFileSync(path.join(dir, 'settings.json'), planted);
    const result = await runWispdExpectingExit(dir);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${dir}: it is open to group or others (mode 0777); it must be private (0700)`);
    expect(result.output).toContain(`chmod 700 ${dir}`);
    expect(statSync(dir).mode & 0o777).toBe(0o777);
    expect(readdirSync(dir)).toEqual(['settings.json']);
  });

  it('refuses a settings.json that group or others can write, naming it', async () => {
    const dir = dataDir({ 'settings.json': planted });
    chmodSync(path.join(dir, 'settings.json'), 0o666);
    const result = await runWispdExpectingExit(dir);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${path.join(dir, 'settings.json')}: it is writable by group or others (mode 0666)`);
  });

  it.runIf(isRoot)('refuses a data dir or a runtime dir another user made, naming it and how to get past it, and writes nothing; starts once they are ours', async () => {
    const data = path.join(home(), 'data');
    const runtime = path.join(home(), 'run');
    mkdirSync(data, { mode: 0o700 });
    mkdirSync(runtime, { mode: 0o700 });
    chownSync(data, 65534, 65534);
    const refusedData = await runWispdExpectingExit(data, ['--runtime-dir', runtime]);
    expect(refusedData.code).toBe(7);
    expect(refusedData.output).toContain(`unsafe ${data}: it belongs to uid 65534, not to this user (uid 0); nothing was read from it or written to it (another user made it, so it is not yours to change: have its owner (uid 65534) or root remove it, or choose another --data-dir)`);
    expect(readdirSync(data)).toEqual([]);
    chownSync(data, 0, 0);
    chownSync(runtime, 65534, 65534);
    const refusedRuntime = await runWispdExpectingExit(data, ['--runtime-dir', runtime]);
    expect(refusedRuntime.code).toBe(7);
    expect(refusedRuntime.output).toContain(`unsafe ${runtime}: it belongs to uid 65534`);
    expect(refusedRuntime.output).toContain('have its owner (uid 65534) or root remove it, or choose another --runtime-dir or --socket');
    expect(readdirSync(runtime)).toEqual([]);
    chownSync(runtime, 0, 0);
    const daemon = await startWispd(data, { args: ['--runtime-dir', runtime] });
    expect(daemon.socket).toBe(path.join(runtime, 'wispd.sock'));
    const client = await daemon.connect();
    expect((await client.call('daemon.status')).paths).toMatchObject({ dataDir: data, runtimeDir: runtime });
    await client.close();
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  });

  it.runIf(isRoot)('refuses a settings.json that belongs to another user, naming it', async () => {
    const dir = dataDir({ 'settings.json': planted });
    chownSync(path.join(dir, 'settings.json'), 65534, 65534);
    const result = await runWispdExpectingExit(dir);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${path.join(dir, 'settings.json')}: it belongs to uid 65534, not to this user (uid 0)`);
  });

  it('refuses an audit.jsonl that is a symlink, naming it, and leaves the file it points at untouched', async () => {
    const victim = path.join(home(), 'victim.txt');
    writeFileSync(victim, 'precious\n', { mode: 0o600 });
    const dir = dataDir();
    symlinkSync(victim, path.join(dir, 'audit.jsonl'));
    const result = await runWispdExpectingExit(dir);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${path.join(dir, 'audit.jsonl')}: it is a symlink`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('refuses a transcript hard-linked to another file of the user, and a registry that is a symlink', async () => {
    const victim = path.join(home(), 'notes.txt');
    writeFileSync(victim, 'mine\n', { mode: 0o600 });
    const linked = dataDir();
    mkdirSync(path.join(linked, 'sessions'), { mode: 0o700 });
    execFileSync('ln', [victim, path.join(linked, 'sessions', 's1.jsonl')]);
    const first = await runWispdExpectingExit(linked);
    expect(first.code).toBe(7);
    expect(first.output).toContain(`unsafe ${path.join(linked, 'sessions', 's1.jsonl')}: it has 2 hard links`);

    const symlinked = dataDir();
    symlinkSync(victim, path.join(symlinked, 'mcp-servers.json'));
    const second = await runWispdExpectingExit(symlinked);
    expect(second.code).toBe(7);
    expect(second.output).toContain(`unsafe ${path.join(symlinked, 'mcp-servers.json')}: it is a symlink`);
    expect(readFileSync(victim, 'utf8')).toBe('mine\n');
  });

  it('skips a config source that is not the user\'s own (the daemon starts, nothing is read from it), and a reload reports it the same way', async () => {
    const dir = dataDir();
    const config = path.join(dir, 'config');
    mkdirSync(config, { mode: 0o700 });
    const settings = path.join(config, 'settings.json');
    const other = path.join(home(), 'elsewhere.json');
    writeFileSync(other, JSON.stringify({ mcpServers: { planted: { command: '/bin/true' } } }));
    symlinkSync(other, settings);
    // Issue 33 (LOW 6): an unsafe source made wispd refuse to start; it is skipped, never fatal.
    const daemon = await startWispd(dir);
    const client = await daemon.connect();
    expect((await client.call('sources.list')).report?.problems).toEqual([
      { file: settings, message: expect.stringContaining(`unsafe ${settings}: it is a symlink`) as string, code: 'UNSAFE_FILE', kept: [] },
    ]);
    expect((await client.call('services.list')).services).toEqual([]);

    execFileSync('rm', [settings]);
    writeFileSync(settings, JSON.stringify({ mcpServers: {} }));
    chmodSync(settings, 0o646);
    const view = await client.call('sources.reload', {});
    expect(view.report?.problems).toEqual([
      { file: settings, message: expect.stringContaining(`unsafe ${settings}: it is writable by group or others (mode 0646)`) as string, code: 'UNSAFE_FILE', kept: [] },
    ]);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('sweeps the temp files that interrupted atomic writes left (settings, sources, registry, install records), and only those', async () => {
    const dir = dataDir({
      '.settings.json.4242.0123456789ab.tmp': '{"half',
      '.sources.json.4242.abcdefabcdef.tmp': '{"half',
      '.mcp-servers.json.77.00aa11bb22cc.tmp': '{"half',
      'mcp-installs/.0123456789abcdef0123456789abcdef.json.9.aaaaaaaaaaaa.tmp': '{"half',
      'keep.tmp': 'not ours',
    });
    const daemon = await startWispd(dir);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual(['keep.tmp']);
    expect(readdirSync(path.join(dir, 'mcp-installs'))).toEqual([]);
    expect(daemon.output()).toContain('removed temp files left by an interrupted write');
    const client = await daemon.connect();
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('creates a data dir that does not exist 0700, and its files 0600', async () => {
    const dir = path.join(home(), 'fresh', 'data');
    const daemon = await startWispd(dir);
    const client = await daemon.connect();
    await client.call('services.register', { name: 'a', command: '/bin/true' });
    await client.call('daemon.shutdown');
    await daemon.exited;
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dir, 'mcp-servers.json')).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(dir, 'wispd.lock'))).toBe(false);
  });
});
