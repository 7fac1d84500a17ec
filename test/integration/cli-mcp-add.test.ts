import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { scenarioServer } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 18, "what users reach for": `mcp add` as `claude mcp add` takes it, `mcp add-json`,
 * `mcp ls`/`mcp get`, and `mcp import --from CLIENT`, against a real daemon. The daemon runs
 * without a D-Bus session, so the keychain is unavailable: values are kept with --session.
 */
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;

const ctl = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) => runWispctl(['--socket', daemon.socket, ...args], options);
const names = async (): Promise<string[]> => (await client.call('services.list')).services.map((s) => s.name);

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('mcp add, as claude mcp add', () => {
  it('NAME -- COMMAND ARGS registers a stdio server, disabled', async () => {
    const result = await ctl(['mcp', 'add', 'files', '--', process.execPath, scenarioServer, '--tools', '1']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^registered files \(disabled, id [0-9a-f-]{36}\)\n/);
    const { service } = await client.call('services.get', { name: 'files' });
    expect(service).toMatchObject({ transport: 'stdio', command: process.execPath, args: [scenarioServer, '--tools', '1'], connection: { status: 'disabled' } });
  });

  it('--transport http NAME URL registers a remote server; a URL without --transport is refused', async () => {
    const refused = await ctl(['mcp', 'add', 'web', 'https://example.com/mcp']);
    expect(refused).toMatchObject({ code: 2, stdout: '', stderr: 'wispctl: https://example.com/mcp is a URL: add --transport http (stdio, the default, runs a program) (INVALID_PARAMS)\n' });
    const added = await ctl(['mcp', 'add', '--transport', 'http', 'web', 'https://example.com/mcp']);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('url:      https://example.com/mcp (remote: its output is untrusted)');
    expect((await client.call('services.get', { name: 'web' })).service).toMatchObject({ transport: 'http', url: 'https://example.com/mcp' });
    const sse = await ctl(['mcp', 'add', '--transport', 'carrier-pigeon', 'x', 'https://example.com/mcp']);
    expect(sse.code).toBe(2);
    expect(sse.stderr).toContain("error: option '-t, --transport <kind>' argument 'carrier-pigeon' is invalid. Allowed choices are stdio, http, sse.");
  });

  it('--env NAME=value and --header NAME: value are refused with one line, and nothing is registered', async () => {
    const before = await names();
    const env = await ctl(['mcp', 'add', '--env', 'API_KEY=sk-123', 'leaky', '--', process.execPath, scenarioServer]);
    expect(env).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'wispctl: --env takes a name only, not a value: the value would land in your shell history; give --env API_KEY and type it when asked (INVALID_PARAMS)\n',
    });
    const header = await ctl(['mcp', 'add', '-t', 'http', '-H', 'Authorization: Bearer sk-123', 'leaky', 'https://example.com/mcp']);
    expect(header).toMatchObject({ code: 2, stderr: 'wispctl: --header takes a name only, not a value: the value would land in your shell history; give --header Authorization and type it when asked (INVALID_PARAMS)\n' });
    for (const result of [env, header]) expect(result.stderr).not.toContain('sk-123');
    const misplaced = await ctl(['mcp', 'add', '--header', 'Authorization', 'leaky', '--', process.execPath]);
    expect(misplaced).toMatchObject({ code: 2, stderr: 'wispctl: --header is for remote servers (--transport http); a stdio server takes --env (INVALID_PARAMS)\n' });
    expect(await names()).toEqual(before);
  });

  it('--env NAME reads the value (here from stdin), keeps it with --session, and the server gets it', async () => {
    const result = await ctl(['mcp', 'add', '--env', 'API_TOKEN', '--session', 'withenv', '--', process.execPath, scenarioServer], { input: 'tok-secret-value\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('env:      API_TOKEN (session)');
    expect(result.stdout + result.stderr).not.toContain('tok-secret-value');
    const { service } = await client.call('services.get', { name: 'withenv' });
    expect(service.env).toEqual([{ name: 'API_TOKEN', storage: 'session' }]);
    const active = (await client.call('services.activate', { id: service.id, configVersion: service.configVersion })).service;
    expect(active.connection.status).toBe('active');
    await client.call('services.disable', { id: service.id });
  });

  it('--header NAME on an http server is kept the same way', async () => {
    const result = await ctl(['mcp', 'add', '--transport', 'http', '--header', 'Authorization', '--session', 'remote2', 'https://example.com/mcp'], { input: 'Bearer abc\n' });
    expect(result.code).toBe(0);
    expect((await client.call('services.get', { name: 'remote2' })).service.headers).toEqual([{ name: 'Authorization', storage: 'session' }]);
  });

  it('without --session and no keychain: refused before any value is read, naming the --session form; nothing registered', async () => {
    // stdin is empty: a command that read it first would refuse the empty value (exit 2) instead.
    const result = await ctl(['mcp', 'add', '--env', 'API_TOKEN', 'nokeychain', '--', process.execPath, scenarioServer]);
    expect(result.code).toBe(7);
    expect(result.stderr).toBe(
      `wispctl: the OS keychain is unavailable (no D-Bus session bus), so nothing was asked and nothing written. Unlock or start it, or keep the value for this daemon run only: wispctl mcp add --env API_TOKEN nokeychain --session -- ${process.execPath} ${scenarioServer} (KEYCHAIN_UNAVAILABLE)\n`,
    );
    expect(await names()).not.toContain('nokeychain');
  });

  it('two values cannot both come from piped stdin; a taken name is refused before anything is asked', async () => {
    const two = await ctl(['mcp', 'add', '-e', 'A', '-e', 'B', '--session', 'twovalues', '--', process.execPath], { input: 'a\nb\n' });
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('stdin is not a terminal and holds one value only');
    const taken = await ctl(['mcp', 'add', '-e', 'A', '--session', 'files', '--', process.execPath], { input: 'a\n' });
    expect(taken).toMatchObject({ code: 5, stderr: 'wispctl: a service named files exists already (nothing was asked): wispctl mcp show files (SERVICE_NAME_TAKEN)\n' });
    expect(await names()).not.toContain('twovalues');
  });
});

describe('mcp ls and mcp get', () => {
  it('are list and show', async () => {
    const [ls, list, get, show] = await Promise.all([ctl(['mcp', 'ls']), ctl(['mcp', 'list']), ctl(['mcp', 'get', 'files']), ctl(['mcp', 'show', 'files'])]);
    expect(ls).toEqual(list);
    expect(ls.stdout).toMatch(/^NAME +STATE +PID/);
    expect(get).toEqual(show);
    expect(get.stdout).toMatch(/^name: +files\n/);
    const json = await ctl(['--json', 'mcp', 'get', 'files']);
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'files', transport: 'stdio' });
  });
});

describe('mcp add-json', () => {
  it('registers a stdio entry and an http entry in the mcpServers format', async () => {
    const stdio = await ctl(['mcp', 'add-json', 'jsonfiles', JSON.stringify({ command: process.execPath, args: [scenarioServer] })]);
    expect(stdio.code).toBe(0);
    expect(stdio.stdout).toMatch(/^registered jsonfiles \(disabled/);
    expect((await client.call('services.get', { name: 'jsonfiles' })).service).toMatchObject({ command: process.execPath, args: [scenarioServer] });
    const http = await ctl(['mcp', 'add-json', 'jsonweb', '{"type":"http","url":"https://example.com/mcp"}']);
    expect(http.code).toBe(0);
    expect((await client.call('services.get', { name: 'jsonweb' })).service).toMatchObject({ transport: 'http', url: 'https://example.com/mcp' });
  });

  it('refuses what it does not know: other keys, another type, two transports, not an object', async () => {
    const before = await names();
    const cases: [string, unknown][] = [
      ['{"command":"node","cwd":"/tmp"}', 'wispctl: the JSON has cwd: an entry takes only type, command, args, env, url, headers, oauth (INVALID_CONFIG)\n'],
      ['{"type":"websocket","url":"wss://x"}', 'wispctl: "type" websocket is not one wispctl adds (stdio, http or sse) (INVALID_CONFIG)\n'],
      ['{"command":"node","url":"https://example.com"}', 'wispctl: a stdio entry has "command" (and "args", "env"), and no "url" (INVALID_CONFIG)\n'],
      ['["node"]', 'wispctl: the JSON must be one object: {"command": ..., "args": [...]} or {"type": "http", "url": ...} (INVALID_CONFIG)\n'],
      ['{"command":', expect.stringMatching(/^wispctl: the JSON is not valid JSON: .* \(INVALID_PARAMS\)\n$/)],
    ];
    const results = await Promise.all(cases.map(([json]) => ctl(['mcp', 'add-json', 'refused', json])));
    results.forEach((result, i) => expect(result).toMatchObject({ code: 2, stdout: '', stderr: cases[i]?.[1] }));
    const taken = await ctl(['mcp', 'add-json', 'jsonfiles', '{"command":"node"}']);
    expect(taken).toMatchObject({ code: 5, stderr: 'wispctl: a service named jsonfiles already exists (SERVICE_NAME_TAKEN)\n' });
    expect(await names()).toEqual(before);
  });

  it('env values are kept only with consent: refused without a terminal or --yes; with --yes kept, and the shell history is mentioned', async () => {
    const entry = JSON.stringify({ command: process.execPath, args: [scenarioServer], env: { API_TOKEN: 'tok-json-secret' } });
    const refused = await ctl(['mcp', 'add-json', '--session', 'jsonenv', entry]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'warning: the JSON on the command line holds values for API_TOKEN (env): they are in your shell history now (give such JSON on stdin: wispctl mcp add-json jsonenv -)\n' +
        'wispctl: the JSON holds values for API_TOKEN (env): pass --yes to keep them in memory for this daemon run, or leave them out and set each with wispctl mcp env set / mcp header set (INVALID_PARAMS)\n',
    );
    expect(await names()).not.toContain('jsonenv');
    const kept = await ctl(['mcp', 'add-json', '--session', '--yes', 'jsonenv', '-'], { input: entry });
    expect(kept.code).toBe(0);
    expect(kept.stderr).toBe(''); // from stdin: nothing in the shell history
    expect(kept.stdout).toContain('env:      API_TOKEN (session)');
    expect(kept.stdout).not.toContain('tok-json-secret');
    expect((await client.call('services.get', { name: 'jsonenv' })).service.env).toEqual([{ name: 'API_TOKEN', storage: 'session' }]);
  });
});

describe.skipIf(!Terminal.available())('mcp add-json on a terminal', () => {
  it('asks before it keeps the values: n adds nothing (exit 7), y adds it', async () => {
    const entry = JSON.stringify({ command: process.execPath, env: { TOKEN: 'x' } });
    for (const [answer, status] of [['n', 7], ['y', 0]] as const) {
      const terminal = new Terminal(['/bin/sh', '-c', '"$@"; echo "[exit $?]"', 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'add-json', '--session', 'asked', entry], {
        PATH: process.env.PATH ?? '',
      });
      try {
        await terminal.waitFor(/The JSON holds values for TOKEN \(env\)\.\nKeep these values in memory for this daemon run for asked\? \[y\/N\]\s*$/m);
        terminal.type(`${answer}\r`);
        const screen = await terminal.waitFor(/\[exit \d+\]/);
        expect(screen).toContain(`[exit ${status}]`);
        if (answer === 'n') expect(screen).toContain('nothing added');
      } finally {
        terminal.close();
      }
      expect((await names()).includes('asked')).toBe(answer === 'y');
    }
  }, 90_000);
});

describe('mcp import --from CLIENT', () => {
  const clientHome = path.join(home.path, 'home');
  const configHome = path.join(home.path, 'xdg');
  const env = daemonEnv({ HOME: clientHome, XDG_CONFIG_HOME: configHome });
  const entry = (arg: string) => ({ command: process.execPath, args: [scenarioServer, arg] });

  it('a missing file is a clear error naming where it looked', async () => {
    const result = await ctl(['mcp', 'import', '--from', 'cursor'], { env });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `wispctl: no Cursor config at ${clientHome}/.cursor/mcp.json (where Cursor keeps it on this system); give the file instead: wispctl mcp import FILE (INVALID_PARAMS)\n`,
    });
    const both = await ctl(['mcp', 'import', 'file.json', '--from', 'cursor'], { env });
    expect(both).toMatchObject({ code: 2, stderr: 'wispctl: give a FILE or --from CLIENT (one of the two) (INVALID_PARAMS)\n' });
  });

  it('finds each client\'s file in its usual place (Linux) and imports its servers', async () => {
    const write = (file: string, text: string): void => {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    };
    write(path.join(configHome, 'Claude', 'claude_desktop_config.json'), JSON.stringify({ mcpServers: { 'from-desktop': entry('desktop') } }));
    write(
      path.join(clientHome, '.claude.json'),
      JSON.stringify({ numStartups: 3, mcpServers: { 'from-code-user': entry('user') }, projects: { [process.cwd()]: { mcpServers: { 'from-code-local': entry('local') } }, '/elsewhere': { mcpServers: { 'not-here': entry('x') } } } }),
    );
    // VS Code's mcp.json: "servers", comments, a trailing comma, ${env:NAME}.
    write(path.join(configHome, 'Code', 'User', 'mcp.json'), `{\n  // mine\n  "servers": {\n    "from-vscode": { "command": "${process.execPath}", "args": ["\${env:HOME}/x"], },\n  },\n  "inputs": []\n}\n`);
    write(path.join(clientHome, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: { 'from-cursor': entry('cursor') } }));

    const expected: Record<string, string[]> = { 'claude-desktop': ['from-desktop'], 'claude-code': ['from-code-user', 'from-code-local'], vscode: ['from-vscode'], cursor: ['from-cursor'] };
    for (const [from, imported] of Object.entries(expected)) {
      const result = await ctl(['mcp', 'import', '--from', from], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe([...imported.map((n) => `imported ${n} (stdio, disabled, sandboxed)`), 'the local ones run sandboxed: no network, their cwd only, nothing else of yours (not your home, not other projects); a path their args name is not granted by itself. See and grant with: wispctl mcp sandbox NAME', 'trust and start each with: wispctl mcp activate NAME'].join('\n') + '\n');
    }
    expect(await names()).not.toContain('not-here');
    expect((await client.call('services.get', { name: 'from-vscode' })).service.args).toEqual(['${HOME}/x']);
  }, 90_000);
});
