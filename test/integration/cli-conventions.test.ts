import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { scenarioServer } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/** Issue 18: what a newcomer sees when using wispctl wrongly, or reaching for the usual words. */

const home = tempDir();
let daemon: RunningDaemon;
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
});
afterAll(async () => {
  const client = await daemon.connect();
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('usage (bug 11)', () => {
  it('no arguments: a short usage on stderr, one line per command, exit 2', async () => {
    const run = await runWispctl([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(30);
    expect(lines).toContain('  status        show the daemon');
    expect(lines).toContain('  mcp           manage MCP server registrations');
    expect(run.stderr).toContain('wispctl help errors');
    expect(run.stderr).not.toContain('SERVICE_NOT_FOUND');
  });

  it('an unknown command: one line naming it, with the close command when there is one, exit 2', async () => {
    const typo = await runWispctl(['stauts']);
    expect(typo).toMatchObject({ code: 2, stdout: '', stderr: "error: unknown command 'stauts'; did you mean wispctl status?\n" });
    const unknown = await runWispctl(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stderr: "error: unknown command 'frobnicate'; wispctl --help lists the commands\n" });
    const sub = await runWispctl(['mcp', 'actvate', 'x']);
    expect(sub).toMatchObject({ code: 2, stderr: "error: unknown command 'actvate'; did you mean wispctl mcp activate?\n" });
  });

  it('a usage error points at the command\'s --help instead of printing it all', async () => {
    const run = await runWispctl(['mcp', 'add']);
    expect(run).toMatchObject({ code: 2, stderr: "error: missing required argument 'name'\n(wispctl mcp add --help shows how to use it)\n" });
  });

  it('the error codes are in wispctl help errors, aligned, and not in --help', async () => {
    const help = await runWispctl(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).not.toContain('SERVICE_NOT_FOUND');
    expect(help.stdout).toContain('Error codes: wispctl help errors');
    for (const args of [['help', 'errors'], ['errors']]) {
      const run = await runWispctl(args);
      expect(run.code, args.join(' ')).toBe(0);
      const rows = run.stdout.split('\n').filter((line) => /^[A-Z_]{4,} +\d/.test(line));
      expect(rows.map((row) => row.split(' ')[0])).toEqual([...ERROR_CODES]);
      // Aligned: every exit status starts in the same column.
      expect(new Set(rows.map((row) => /\s(\d+)\s/.exec(row)?.index)).size).toBe(1);
    }
  });

  it('output into a pipe whose reader left (wispctl errors | head -1): a quiet exit, no EPIPE stack', async () => {
    // A real pipe whose reader has gone before wispctl writes (head -1 exits after its line).
    const child = spawn(process.execPath, [wispctlBin, 'errors'], { stdio: ['ignore', 'pipe', 'pipe'], env: daemonEnv() });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });

  it('mcp enable is mcp activate: the same trust question', async () => {
    expect((await ctl('mcp', 'add', 'scen', '--', process.execPath, scenarioServer)).code).toBe(0);
    const refused = await ctl('mcp', 'enable', 'scen');
    expect(refused.stderr).toContain('not a terminal, so nobody can confirm: pass --yes');
    expect(refused.stderr).toContain(scenarioServer);
    expect(refused.code).not.toBe(0);
    const enabled = await ctl('mcp', 'enable', 'scen', '--yes');
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toMatch(/^scen: active/);
    expect((await ctl('mcp', 'disable', 'scen')).code).toBe(0);
  });
});

describe('messages (bug 10)', () => {
  it('TOOL_NOT_FOUND names the service and tool, and says when the service is merely not active', async () => {
    expect((await ctl('mcp', 'add', 'tools10', '--', process.execPath, scenarioServer, '--call-tools')).code).toBe(0);
    const inactive = await ctl('mcp', 'call', 'tools10', 'echo');
    expect(inactive.code).toBe(4);
    expect(inactive.stderr).toBe('wispctl: tools10 is not active (disabled): activate it with wispctl mcp activate tools10 (TOOL_NOT_FOUND)\n');
    expect((await ctl('mcp', 'activate', 'tools10', '--yes')).code).toBe(0);
    const unknown = await ctl('mcp', 'call', 'tools10', 'no-such-tool');
    expect(unknown.stderr).toBe('wispctl: tools10 has no tool named "no-such-tool" (wispctl mcp tools tools10 lists its tools) (TOOL_NOT_FOUND)\n');
  });

  it('TOOL_ERROR shows the server\'s message once', async () => {
    const human = await daemon.connect();
    human.onEvent((event) => {
      if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    });
    await human.call('events.subscribe', {});
    const run = await ctl('mcp', 'call', 'tools10', 'fail');
    await human.close();
    expect(run.code).toBe(1);
    expect(run.stderr.split('it went wrong on purpose').length - 1).toBe(1);
    expect(run.stderr).toContain('wispctl: tools10/fail reported an error (TOOL_ERROR)');
  });

  it('a name that breaks our pattern is told in words, not as a regular expression', async () => {
    const run = await ctl('mcp', 'add', 'bad name!', '--', '/bin/true');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('must be 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit');
    expect(run.stderr).not.toContain('pattern');
    expect(run.stderr).not.toContain('^[');
  });

  it('SECRET_BINDING_CHANGED names the service in the carry-over command', async () => {
    expect((await ctl('mcp', 'add', 'sec10', '--', process.execPath, scenarioServer)).code).toBe(0);
    expect((await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'set', 'sec10', 'TOKEN10', '--session'], { input: 'v\n' })).code).toBe(0);
    expect((await ctl('mcp', 'edit', 'sec10', '--cwd', '/tmp')).code).toBe(0);
    const run = await ctl('mcp', 'activate', 'sec10', '--yes');
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toContain('SECRET_BINDING_CHANGED');
    expect(`${run.stdout}${run.stderr}`).toContain('(wispctl mcp env carry-over sec10)');
  });

  it('the REASON column says what failed and what to do, not the daemon\'s whole PATH (mcp show has it)', async () => {
    expect((await ctl('mcp', 'add', 'nopath10', '--', 'no-such-wisp-command-10')).code).toBe(0);
    await ctl('mcp', 'activate', 'nopath10', '--yes');
    const row = (await ctl('mcp', 'list')).stdout.split('\n').find((line) => line.startsWith('nopath10 '));
    expect(row).toMatch(/COMMAND_NOT_FOUND: no-such-wisp-command-10 was not found on the daemon's PATH; register it by its absolute path/);
    const daemonPath = process.env.PATH ?? '';
    expect(row).not.toContain(daemonPath);
    expect((await ctl('mcp', 'show', 'nopath10')).stdout).toContain(`(the daemon's PATH: ${daemonPath})`);
  });
});

describe('a service synced from a config file (bug 9)', () => {
  it('mcp remove is refused as mcp edit is, naming the file and how to remove it for good', async () => {
    const project = path.join(home.path, 'project9');
    mkdirSync(project);
    writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { synced9: { command: process.execPath, args: [scenarioServer] } } }));
    expect((await ctl('mcp', 'sources', 'add-project', project)).code).toBe(0);
    const removed = await ctl('mcp', 'remove', 'synced9');
    expect(removed.code).toBe(2);
    expect(removed.stderr).toContain(`synced9 comes from ${path.join(project, '.mcp.json')} and would come back at the next reload`);
    expect(removed.stderr).toContain(`wispctl mcp sources remove-project ${project}`);
    expect((await ctl('mcp', 'reload')).code).toBe(0);
    expect((await ctl('mcp', 'show', 'synced9')).code).toBe(0);
    // The way it names does remove it.
    expect((await ctl('mcp', 'sources', 'remove-project', project)).code).toBe(0);
    expect((await ctl('mcp', 'show', 'synced9')).code).toBe(4);
  });
});

describe('--json (bug 12)', () => {
  it('mcp call --json on a terminal still asks (on stderr), and prints the result as JSON', async () => {
    expect((await ctl('mcp', 'add', 'term12', '--', process.execPath, scenarioServer)).code).toBe(0);
    expect((await ctl('mcp', 'activate', 'term12', '--yes')).code).toBe(0);
    const script = 'trap : INT; "$@"; echo "[exit $?]"';
    const args = ['--socket', daemon.socket, '--json', 'mcp', 'call', 'term12', 'echo', '{"text":"hello12"}'];
    const terminal = new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, ...args], { PATH: process.env.PATH ?? '' });
    try {
      await terminal.waitFor(/Run echo \(service term12\)\? \[y\/N\]\s*$/m);
      terminal.type('y');
      terminal.press('Enter');
      const screen = await terminal.waitFor(/\[exit \d+\]/);
      expect(screen).toContain('[exit 0]');
      expect(screen).toMatch(/"text": "hello12"/);
    } finally {
      terminal.close();
    }
  });

  it('every command\'s help mentions --json', async () => {
    for (const args of [['mcp', 'list'], ['mcp', 'call'], ['status'], ['events']]) {
      expect((await runWispctl([...args, '--help'])).stdout, args.join(' ')).toMatch(/^ {2}--json +machine-readable JSON/m);
    }
  });

  it('status --json with no daemon: a JSON object saying so on stdout, exit 3', async () => {
    const socket = path.join(home.path, 'none.sock');
    const run = await runWispctl(['--socket', socket, '--json', 'status']);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ running: false, socket, code: 'DAEMON_NOT_RUNNING' });
  });

  it('a --socket path too long for a socket is PATH_TOO_LONG, not DAEMON_NOT_RUNNING', async () => {
    const socket = path.join(home.path, 'x'.repeat(120), 'wispd.sock');
    const run = await runWispctl(['--socket', socket, 'status']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^wispctl: socket path is \d+ bytes, over the 10\d-byte limit .*\(PATH_TOO_LONG\)$/m);
  });
});

describe('a command with spaces (bug 15)', () => {
  it('mcp add warns when the command has spaces and names no file, with the split form', async () => {
    const run = await ctl('mcp', 'add', 'shell15', '--', 'node server.js', '--port', '1');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('registered shell15');
    expect(run.stderr).toBe(
      'warning: the command "node server.js" has spaces and no such file exists; it is one program name, not a shell line. Did you mean: wispctl mcp edit shell15 -- node server.js --port 1\n',
    );
  });

  it('no warning for a file whose path has spaces', async () => {
    const program = path.join(home.path, 'my server.js');
    writeFileSync(program, '');
    const run = await ctl('mcp', 'add', 'spaced15', '--', program);
    expect(run).toMatchObject({ code: 0, stderr: '' });
  });
});
