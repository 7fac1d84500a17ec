import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Terminal } from '../helpers/tmux.js';
import { perTestHomes, runWispctl, wispctlBin } from '../helpers/wispd.js';

/**
 * Issue 16, one-line setup: `wispctl mcp serve --print-config CLIENT` and `wispctl mcp
 * connect-client CLIENT`, run as a user would, each with a fresh HOME (no XDG_CONFIG_HOME,
 * no CLAUDE_CONFIG_DIR): the files land where each client reads them on Linux.
 */

const newHome = perTestHomes(afterEach);
const SOCKET = '/tmp/wisp-connect-test/wispd.sock';

/** What every client is told to run: this node, this bin/wispctl.js, the socket we named, `mcp serve`. */
const SERVE = { command: process.execPath, args: [wispctlBin, '--socket', SOCKET, 'mcp', 'serve'] };

const FILES = {
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  'claude-code': '.claude.json',
  vscode: '.config/Code/User/mcp.json',
  cursor: '.cursor/mcp.json',
} as const;

function ctl(home: string, ...args: string[]) {
  return runWispctl(['--socket', SOCKET, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home } });
}

function write(home: string, relative: string, text: string): string {
  const file = path.join(home, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text, { mode: 0o644 });
  return file;
}

describe('wispctl mcp serve --print-config', () => {
  it('Claude Desktop and Cursor: an mcpServers snippet; VS Code: a servers snippet with type stdio', async () => {
    const home = newHome();
    for (const [client, key, entry] of [
      ['claude-desktop', 'mcpServers', SERVE],
      ['cursor', 'mcpServers', SERVE],
      ['vscode', 'servers', { type: 'stdio', ...SERVE }],
    ] as const) {
      const run = await ctl(home, 'mcp', 'serve', '--print-config', client);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ [key]: { wisp: entry } });
      expect(run.stderr).toContain(path.join(home, FILES[client]));
    }
  });

  it('Claude Code: its own `claude mcp add` line, user scope', async () => {
    const run = await ctl(newHome(), 'mcp', 'serve', '--print-config', 'claude-code');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`claude mcp add --scope user wisp -- ${process.execPath} ${wispctlBin} --socket ${SOCKET} mcp serve\n`);
  });

  it('--json gives the entry and where it goes; an unknown client is a usage error', async () => {
    const home = newHome();
    const run = await ctl(home, '--json', 'mcp', 'serve', '--print-config', 'claude-code');
    expect(JSON.parse(run.stdout)).toEqual({ client: 'claude-code', configFile: path.join(home, '.claude.json'), key: 'mcpServers', name: 'wisp', entry: { type: 'stdio', ...SERVE } });
    const bad = await ctl(home, 'mcp', 'serve', '--print-config', 'emacs');
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain('unknown MCP client "emacs": give one of claude-desktop, claude-code, vscode, cursor (INVALID_PARAMS)');
  });

  it('the printed command runs this wispctl', async () => {
    const run = await ctl(newHome(), '--json', 'mcp', 'serve', '--print-config', 'cursor');
    const entry = (JSON.parse(run.stdout) as { entry: { command: string; args: string[] } }).entry;
    const help = await new Promise<string>((resolve, reject) =>
      execFile(entry.command, [...entry.args, '--help'], (error, stdout) => (error !== null ? reject(new Error(error.message)) : resolve(stdout))),
    );
    expect(help).toMatch(/Usage: wispctl mcp serve/);
    expect(help).toContain('--print-config <client>');
  });
});

describe('the socket is named in every snippet, also when none was given (issue 33)', () => {
  // MCP clients start their servers without XDG_RUNTIME_DIR (the SDKs pass HOME, PATH, SHELL,
  // TERM and a few more): the socket the user's shell resolves must be in the command itself.
  const RUNTIME = '/tmp/wisp-connect-test-xdg';
  const RUNTIME_SOCKET = path.join(RUNTIME, 'wisp', 'wispd.sock');
  const shell = (home: string, ...args: string[]) => runWispctl(args, { env: { PATH: process.env.PATH ?? '', HOME: home, XDG_RUNTIME_DIR: RUNTIME } });
  const named = { command: process.execPath, args: [wispctlBin, '--socket', RUNTIME_SOCKET, 'mcp', 'serve'] };

  it('--print-config, for each client', async () => {
    const home = newHome();
    for (const client of Object.keys(FILES) as (keyof typeof FILES)[]) {
      const run = await shell(home, '--json', 'mcp', 'serve', '--print-config', client);
      expect(run.code, run.stderr).toBe(0);
      expect((JSON.parse(run.stdout) as { entry: unknown }).entry).toEqual({ ...(client === 'vscode' || client === 'claude-code' ? { type: 'stdio' } : {}), ...named });
    }
    const line = await shell(home, 'mcp', 'serve', '--print-config', 'claude-code');
    expect(line.stdout).toBe(`claude mcp add --scope user wisp -- ${process.execPath} ${wispctlBin} --socket ${RUNTIME_SOCKET} mcp serve\n`);
  });

  it('connect-client, for each client; with --data-dir, that too', async () => {
    for (const client of Object.keys(FILES) as (keyof typeof FILES)[]) {
      const home = newHome();
      const run = await shell(home, 'mcp', 'connect-client', client, '--yes');
      expect(run.code, run.stderr).toBe(0);
      const entry = (JSON.parse(readFileSync(path.join(home, FILES[client]), 'utf8')) as Record<string, Record<string, { args: string[] }>>)[client === 'vscode' ? 'servers' : 'mcpServers']?.wisp;
      expect(entry?.args).toEqual(named.args);
    }
    const home = newHome();
    const data = path.join(home, 'elsewhere');
    const run = await shell(home, '--data-dir', data, 'mcp', 'connect-client', 'cursor', '--yes');
    expect(run.code, run.stderr).toBe(0);
    const entry = (JSON.parse(readFileSync(path.join(home, FILES.cursor), 'utf8')) as { mcpServers: { wisp: { args: string[] } } }).mcpServers.wisp;
    expect(entry.args).toEqual([wispctlBin, '--data-dir', data, '--socket', path.join(data, 'run', 'wispd.sock'), 'mcp', 'serve']);
  });
});

describe('wispctl mcp connect-client', () => {
  it('on a fresh HOME: creates each client\'s file with the wisp entry only, no backup', async () => {
    for (const client of Object.keys(FILES) as (keyof typeof FILES)[]) {
      const home = newHome();
      const run = await ctl(home, 'mcp', 'connect-client', client, '--yes');
      expect(run.code, run.stderr).toBe(0);
      const file = path.join(home, FILES[client]);
      const key = client === 'vscode' ? 'servers' : 'mcpServers';
      expect(run.stdout).toContain(`added ${key}.wisp in ${file}`);
      const typed = client === 'vscode' || client === 'claude-code' ? { type: 'stdio' } : {};
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ [key]: { wisp: { ...typed, ...SERVE } } });
      expect(statSync(file).mode & 0o077).toBe(0);
      expect(existsSync(`${file}.wisp-backup`)).toBe(false);
    }
  });

  it('on a file with other entries: they are kept, with the file\'s indentation, and a backup holds the file as it was', async () => {
    const home = newHome();
    const original = '{\n\t"numStartups": 7,\n\t"mcpServers": {\n\t\t"other": {"type": "stdio", "command": "/bin/other", "args": [], "env": {"K": "v"}}\n\t},\n\t"projects": {"/p": {"mcpServers": {}}}\n}\n';
    const file = write(home, FILES['claude-code'], original);
    const run = await ctl(home, 'mcp', 'connect-client', 'claude-code', '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`the file as it was: ${file}.wisp-backup`);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^\{\n\t"numStartups": 7,\n\t"mcpServers": \{\n\t\t"other": \{/);
    expect(JSON.parse(text)).toEqual({
      numStartups: 7,
      mcpServers: { other: { type: 'stdio', command: '/bin/other', args: [], env: { K: 'v' } }, wisp: { type: 'stdio', ...SERVE } },
      projects: { '/p': { mcpServers: {} } },
    });
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readFileSync(`${file}.wisp-backup`, 'utf8')).toBe(original);
    expect(statSync(`${file}.wisp-backup`).mode & 0o777).toBe(0o600);
  });

  it('an existing wisp entry is replaced, and says so', async () => {
    const home = newHome();
    const file = write(home, FILES.cursor, JSON.stringify({ mcpServers: { wisp: { command: 'old-wispctl', args: ['mcp', 'serve'] } } }));
    const run = await ctl(home, 'mcp', 'connect-client', 'cursor', '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`replaced mcpServers.wisp in ${file}`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: { wisp: SERVE } });
  });

  it('an unparsable file (JSONC comments, a list, a servers list that is not an object) is refused and left untouched', async () => {
    const home = newHome();
    for (const text of ['{\n  // my servers\n  "servers": {}\n}\n', '[]', '{"servers": []}']) {
      const file = write(home, FILES.vscode, text);
      const run = await ctl(home, 'mcp', 'connect-client', 'vscode', '--yes');
      expect(run.code, text).toBe(7);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^wispctl: ${file.replace(/[.]/g, '\\.')}: .*; it was not changed\\. .*wispctl mcp serve --print-config vscode.*\\(CLIENT_CONFIG_INVALID\\)\\n$`));
      expect(readFileSync(file, 'utf8')).toBe(text);
      expect(existsSync(`${file}.wisp-backup`)).toBe(false);
    }
  });

  it('a symlinked config stays a symlink: its target gets the entry', async () => {
    const home = newHome();
    const target = write(home, 'dotfiles/cursor-mcp.json', '{"mcpServers": {}}\n');
    mkdirSync(path.join(home, '.cursor'));
    symlinkSync(target, path.join(home, FILES.cursor));
    const run = await ctl(home, 'mcp', 'connect-client', 'cursor', '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(lstatSync(path.join(home, FILES.cursor)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual({ mcpServers: { wisp: SERVE } });
    expect(existsSync(`${target}.wisp-backup`)).toBe(true);
  });

  it('without a terminal and without --yes: refused, nothing written', async () => {
    const home = newHome();
    const run = await ctl(home, 'mcp', 'connect-client', 'cursor');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('pass --yes to write it');
    expect(existsSync(path.join(home, FILES.cursor))).toBe(false);
  });
});

describe.skipIf(!Terminal.available())('wispctl mcp connect-client at a terminal', () => {
  /** wispctl in a real terminal, under a shell that prints its exit status. */
  function terminal(home: string, ...args: string[]): Terminal {
    const script = 'trap : INT; "$@"; echo "[exit $?]"';
    // The tmux server keeps the environment of whoever started it (npm test sets XDG_CONFIG_HOME):
    // set it to where a user with this HOME has it, or wispctl would look elsewhere.
    return new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, '--socket', SOCKET, ...args], {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
    });
  }

  it('shows the change (the entry it replaces too) and asks; declined, the file is untouched and no backup is made', async () => {
    const home = newHome();
    const original = JSON.stringify({ mcpServers: { other: { command: '/bin/other' }, wisp: { command: 'old-wispctl' } } });
    const file = write(home, FILES['claude-desktop'], original);
    const term = terminal(home, 'mcp', 'connect-client', 'claude-desktop');
    try {
      const screen = await term.waitFor(/\? \[y\/N\]\s*$/m);
      expect(screen).toContain(`Claude Desktop: ${file}`);
      expect(screen).toMatch(/- mcpServers\.wisp \(the entry there now, replaced\):\n\s+\{\n\s+"command": "old-wispctl"/);
      expect(screen).toMatch(/\+ mcpServers\.wisp:\n\s+\{\n\s+"command": "[^"]*node"/);
      expect(screen).toContain('(everything else in the file is kept)');
      expect(screen).toContain(`(the file as it is now is kept in ${file}.wisp-backup)`);
      term.type('n');
      term.press('Enter');
      const end = await term.waitFor(/\[exit \d+\]/);
      expect(end).toContain(`not changed: ${file}`);
      expect(end).toContain('[exit 7]');
    } finally {
      term.close();
    }
    expect(readFileSync(file, 'utf8')).toBe(original);
    expect(existsSync(`${file}.wisp-backup`)).toBe(false);
  });

  it('accepted: the new file is written', async () => {
    const home = newHome();
    const file = path.join(home, FILES.vscode);
    const term = terminal(home, 'mcp', 'connect-client', 'vscode');
    try {
      const screen = await term.waitFor(/\? \[y\/N\]\s*$/m);
      expect(screen).toContain(`VS Code (user mcp.json): ${file} (a new file)`);
      term.type('y');
      term.press('Enter');
      const end = await term.waitFor(/\[exit \d+\]/);
      expect(end).toContain(`added servers.wisp in ${file}`);
      expect(end).toContain('[exit 0]');
    } finally {
      term.close();
    }
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ servers: { wisp: { type: 'stdio', ...SERVE } } });
  });
});
