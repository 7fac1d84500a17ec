import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { registerScenario } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/** Issue 37, "CLI rough edges": what a user sees when reaching for another tool's words or mistyping. */

const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
  await registerScenario(client, 'files');
});
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('claude mcp add -s / --scope', () => {
  it('says what Wisp does instead of scopes, not "did you mean --socket?", exit 2', async () => {
    for (const scope of [['-s', 'user'], ['--scope', 'user'], ['--scope=project']]) {
      const run = await ctl('mcp', 'add', ...scope, 'x', '--', '/bin/true');
      expect(run.code, scope.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`error: unknown option '${scope[0] ?? ''}': Wisp has no scopes. Its registry is per user`);
      expect(run.stderr).toContain("a project's own servers come from its .mcp.json: wispctl mcp sources add-project DIR");
      expect(run.stderr).not.toContain('--socket');
      expect(run.stderr).toContain('(wispctl mcp add --help shows how to use it)');
    }
    await expect(client.call('services.get', { name: 'x' })).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
    // Another mistyped option keeps commander's suggestion.
    const typo = await runWispctl(['--scoket', 'x', 'status']);
    expect(typo).toMatchObject({ code: 2, stderr: "error: unknown option '--scoket'\n(Did you mean --socket?)\n(wispctl --help shows how to use it)\n" });
  });
});

describe('a mistyped service name', () => {
  it('suggests the close registered name, with the not-found exit status 4', async () => {
    const run = await ctl('mcp', 'show', 'fils');
    expect(run).toMatchObject({ code: 4, stdout: '', stderr: 'wispctl: no service with name fils; did you mean files? (SERVICE_NOT_FOUND)\n' });
    const far = await ctl('mcp', 'show', 'zzzzzz');
    expect(far).toMatchObject({ code: 4, stderr: 'wispctl: no service with name zzzzzz (SERVICE_NOT_FOUND)\n' });
    // Every command that names a service gets it (the suggestion is made where the client is, not per command).
    expect((await ctl('mcp', 'env', 'list', 'flies')).stderr).toContain('did you mean files?');
  });
});

describe('a --socket that is not a socket', () => {
  it('says what is there instead, exit 7 (UNSAFE_DIRECTORY, as wispd says for the same path)', async () => {
    const file = path.join(home.path, 'not-a-socket');
    writeFileSync(file, 'x');
    const dir = path.join(home.path, 'a-dir');
    mkdirSync(dir);
    const onFile = await runWispctl(['--socket', file, 'status']);
    expect(onFile).toMatchObject({ code: 7, stdout: '', stderr: `wispctl: ${file} is a regular file, not a socket: --socket (or WISP_SOCKET) must name the socket wispd listens on (UNSAFE_DIRECTORY)\n` });
    const onDir = await runWispctl(['--socket', dir, 'mcp', 'list']);
    expect(onDir).toMatchObject({ code: 7, stderr: `wispctl: ${dir} is a directory, not a socket: --socket (or WISP_SOCKET) must name the socket wispd listens on (UNSAFE_DIRECTORY)\n` });
    const onEvents = await runWispctl(['--socket', file, 'events']);
    expect(onEvents.code).toBe(7);
    // Nothing there at all is still "no daemon".
    const missing = await runWispctl(['--socket', path.join(home.path, 'nothing'), 'status']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('DAEMON_NOT_RUNNING');
  });
});

describe('wispctl call', () => {
  it('an unknown method is a usage error: exit 2 with the daemon\'s message', async () => {
    const run = await ctl('call', 'daemon.statsu');
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: 'wispctl: no method named "daemon.statsu" (METHOD_NOT_FOUND)\n' });
    const ok = await ctl('call', 'daemon.status');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toHaveProperty('pid');
  });
});

describe('relative directories', () => {
  it('mcp add --cwd and mcp edit --cwd resolve a relative path against the current directory, as mcp sources add-project does', async () => {
    const work = path.join(home.path, 'work');
    mkdirSync(path.join(work, 'proj', 'sub'), { recursive: true });
    writeFileSync(path.join(work, 'proj', '.mcp.json'), '{"mcpServers":{}}');
    const added = await runWispctl(['--socket', daemon.socket, 'mcp', 'add', 'relcwd', '--cwd', 'proj', '--', '/bin/true'], { cwd: work });
    expect(added.code, added.stderr).toBe(0);
    expect((await client.call('services.get', { name: 'relcwd' })).service.cwd).toBe(path.join(work, 'proj'));
    const edited = await runWispctl(['--socket', daemon.socket, 'mcp', 'edit', 'relcwd', '--cwd', 'sub'], { cwd: path.join(work, 'proj') });
    expect(edited.code, edited.stderr).toBe(0);
    expect((await client.call('services.get', { name: 'relcwd' })).service.cwd).toBe(path.join(work, 'proj', 'sub'));
    const project = await runWispctl(['--socket', daemon.socket, 'mcp', 'sources', 'add-project', 'proj'], { cwd: work });
    expect(project.code, project.stderr).toBe(0);
    expect((await client.call('sources.list')).projects).toContain(path.join(work, 'proj'));
    // The help says so.
    expect((await runWispctl(['mcp', 'add', '--help'])).stdout).toMatch(/--cwd <dir>\s+stdio: working directory \(a relative one is\s+resolved against the current directory/);
  });
});

describe('mcp serve on a terminal', () => {
  it.runIf(Terminal.available())('says on stderr that it waits for an MCP client on stdin and how to connect one, then serves', async () => {
    const script = 'trap : INT; "$@"; echo "[exit $?]"';
    const terminal = new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'], { PATH: process.env.PATH ?? '' });
    try {
      const screen = await terminal.waitFor(/Ctrl-C stops it\./);
      const said = screen.replace(/\n/g, '');
      expect(said).toContain('wispctl mcp serve: waiting for an MCP client on stdin');
      expect(said).toContain('To connect a client: wispctl mcp connect-client claude-desktop|claude-code|vscode|cursor');
      // Still serving: an initialize typed at it is answered.
      terminal.type('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}');
      terminal.press('Enter');
      // The answer is one long line, which the terminal wraps where its width falls: a line break may be anywhere in it.
      await terminal.waitFor(/"\n?s\n?e\n?r\n?v\n?e\n?r\n?I\n?n\n?f\n?o\n?"/);
      terminal.press('C-d');
      expect(await terminal.waitFor(/\[exit \d+\]/)).toContain('[exit 0]');
    } finally {
      terminal.close();
    }
  });

  it('says nothing when stdin is not a terminal (an MCP client started it)', async () => {
    const run = await ctl('mcp', 'serve');
    expect(run.stderr).not.toContain('waiting for an MCP client');
    expect(run.stdout).toBe('');
  });
});
