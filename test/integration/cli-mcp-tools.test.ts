import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { EventLog, activate, pidOf, registerScenario } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 18, "what users reach for": `mcp call NAME TOOL key=value` typed by the tool's schema,
 * `mcp describe`, `mcp logs -f` and `mcp restart`, against a real daemon and the scenario
 * fixture server.
 */
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;

const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

/** Approves the next approval asked for this tool (the CLI runs without a terminal, so it waits for one). */
function approveNext(toolName: string): Promise<void> {
  return events
    .next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === toolName)
    .then(async (e) => {
      await client.call('approvals.respond', { id: (e as Extract<WispEvent, { type: 'approval.requested' }>).approval.id, decision: 'approve' });
    });
}

async function approvalsFor(toolName: string): Promise<number> {
  return (await client.call('approvals.list', { all: true })).approvals.filter((a) => a.summary.toolName === toolName).length;
}

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await registerScenario(client, 'tools', ['--call-tools', '--typed-tool']);
  await activate(client, 'tools');
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('mcp call NAME TOOL key=value', () => {
  it('types each value by the schema: integer, number, boolean, array, object, null; strings as they are', async () => {
    const approved = approveNext('typed');
    const result = await ctl('mcp', 'call', 'tools', 'typed', 'count=3', 'ratio=0.5', 'flag=true', 'tags=["a","b"]', 'opts={"k":1}', 'note=007', 'maybe=null');
    await approved;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ count: 3, ratio: 0.5, flag: true, tags: ['a', 'b'], opts: { k: 1 }, note: '007', maybe: null });
  });

  it('a string-or-null property keeps other text as a string; the JSON object form and --json still work', async () => {
    let approved = approveNext('typed');
    const text = await ctl('mcp', 'call', 'tools', 'typed', 'count=1', 'maybe=x=y');
    await approved;
    expect(JSON.parse(text.stdout)).toEqual({ count: 1, maybe: 'x=y' });
    approved = approveNext('echo');
    const json = await ctl('--json', 'mcp', 'call', 'tools', 'echo', '{"text":"as JSON"}');
    await approved;
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ text: 'as JSON' });
  });

  it('an unknown key, a value of the wrong type or a word without = is refused before any approval', async () => {
    const before = await approvalsFor('typed');
    const unknown = await ctl('mcp', 'call', 'tools', 'typed', 'count=1', 'colour=red');
    expect(unknown).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'wispctl: typed has no argument colour: it takes count, ratio, flag, tags, opts, note, maybe (nothing was asked or sent) (INVALID_ARGUMENTS)\n',
    });
    // Independent refusals, run side by side (each is a whole wispctl process).
    const refusals: [string[], number, string][] = [
      [['count=three'], 2, 'wispctl: count must be an integer, not three (INVALID_ARGUMENTS)\n'],
      [['count=1.5'], 2, 'wispctl: count must be an integer, not 1.5 (INVALID_ARGUMENTS)\n'],
      [['tags=a,b'], 2, 'wispctl: tags must be a JSON array, not a,b (INVALID_ARGUMENTS)\n'],
      [['flag=yes'], 2, 'wispctl: flag must be true or false, not yes (INVALID_ARGUMENTS)\n'],
      [['count'], 2, 'wispctl: count is not key=value (or give the arguments as one JSON object) (INVALID_PARAMS)\n'],
      [['count=1', 'count=2'], 2, 'wispctl: count is given twice (INVALID_PARAMS)\n'],
    ];
    const results = await Promise.all(refusals.map(([words]) => ctl('mcp', 'call', 'tools', 'typed', ...words)));
    results.forEach((result, i) => expect(result).toMatchObject({ code: refusals[i]?.[1], stdout: '', stderr: refusals[i]?.[2] }));
    expect(await ctl('mcp', 'call', 'tools', 'nosuch', 'a=1')).toMatchObject({ code: 4, stderr: 'wispctl: tools has no tool named "nosuch" (wispctl mcp tools tools lists its tools) (TOOL_NOT_FOUND)\n' });
    expect(await approvalsFor('typed')).toBe(before);
  });
});

describe('mcp describe NAME TOOL', () => {
  it('shows the arguments and the whole schema, escaped; --json gives the tool', async () => {
    const result = await ctl('mcp', 'describe', 'tools', 'typed');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('tool:        typed (service tools)\n');
    expect(result.stdout).toMatch(/^ {2}NAME +TYPE +REQUIRED +DESCRIPTION\n {2}count +integer +yes +how many\n/m);
    expect(result.stdout).toMatch(/^ {2}tags +array of string +no/m);
    expect(result.stdout).toMatch(/^ {2}maybe +string\|null +no/m);
    // The server's escape sequence is shown, never sent to the terminal.
    expect(result.stdout).not.toContain('\u001b');
    expect(result.stdout).toContain('a note \\x1b[31min red');
    expect(result.stdout).toContain('"description": "a note \\u001b[31min red"');
    expect(result.stdout).toContain('call it: wispctl mcp call tools typed count=...\n');
    const json = await ctl('--json', 'mcp', 'describe', 'tools', 'typed');
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'typed', serviceName: 'tools', inputSchema: { required: ['count'] } });
  });

  it('an unknown tool, or a service that is not active, is TOOL_NOT_FOUND naming it', async () => {
    expect(await ctl('mcp', 'describe', 'tools', 'nosuch')).toMatchObject({ code: 4, stderr: 'wispctl: tools has no tool named "nosuch" (wispctl mcp tools tools lists its tools) (TOOL_NOT_FOUND)\n' });
    await registerScenario(client, 'idle');
    expect(await ctl('mcp', 'describe', 'idle', 'echo')).toMatchObject({ code: 4, stderr: 'wispctl: idle is not active (disabled): activate it with wispctl mcp activate idle (TOOL_NOT_FOUND)\n' });
  });
});

/** The output of a running wispctl, and a way to wait for text in it. */
function spawnCtl(...args: string[]) {
  const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: daemonEnv() });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = once(child, 'close') as Promise<[number | null]>;
  return {
    child,
    closed,
    output: () => ({ stdout, stderr }),
    async waitFor(pattern: RegExp): Promise<void> {
      while (!pattern.test(stdout)) {
        if (child.exitCode !== null) throw new Error(`wispctl ended: ${stdout}${stderr}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

async function callCount(): Promise<void> {
  const approved = approveNext('count');
  expect((await ctl('mcp', 'call', 'tools', 'count')).code).toBe(0);
  await approved;
}

describe('mcp logs NAME -f', () => {
  it('prints the tail, then each new line; a restart starts the tail again; Ctrl-C ends it with 130', async () => {
    await callCount();
    const follow = spawnCtl('mcp', 'logs', 'tools', '-f');
    await follow.waitFor(/^count called 1 times\n$/);
    await callCount();
    await follow.waitFor(/^count called 1 times\ncount called 2 times\n$/);
    const { service } = await client.call('services.disable', { name: 'tools' });
    await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    await callCount();
    // The new process counts from 1 again: its tail is followed from its start.
    await follow.waitFor(/count called 2 times\ncount called 1 times\n$/);
    follow.child.kill('SIGINT');
    const [code] = await follow.closed;
    expect(code).toBe(130);
    expect(follow.output().stdout).toBe('count called 1 times\ncount called 2 times\ncount called 1 times\n');
  }, 90_000);

  it('a removed service ends it with SERVICE_NOT_FOUND', async () => {
    await registerScenario(client, 'shortlived', ['--print-env']);
    await activate(client, 'shortlived');
    const follow = spawnCtl('mcp', 'logs', '-f', 'shortlived');
    // It follows once it has printed what the server wrote at its start.
    await follow.waitFor(/^env: PATH=/m);
    await client.call('services.delete', { name: 'shortlived' });
    const [code] = await follow.closed;
    expect(code).toBe(4);
    expect(follow.output().stderr).toMatch(/\(SERVICE_NOT_FOUND\)\n$/);
  });
});

describe('mcp restart NAME', () => {
  it('--yes: disables, then activates again (a new process)', async () => {
    const before = pidOf((await client.call('services.get', { name: 'tools' })).service);
    const result = await ctl('mcp', 'restart', 'tools', '--yes');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('tools: disabled\n');
    const match = /^tools: active \(pid (\d+), 10 tools\)\n$/.exec(result.stdout);
    expect(match).not.toBeNull();
    expect(Number(match?.[1])).not.toBe(before);
  });

  it('without a terminal and without --yes: refused before anything is stopped', async () => {
    const before = (await client.call('services.get', { name: 'tools' })).service.connection;
    const result = await ctl('mcp', 'restart', 'tools');
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: 'wispctl: not a terminal, so nobody can confirm: pass --yes to trust this configuration (nothing was stopped) (INVALID_PARAMS)\n' });
    expect((await client.call('services.get', { name: 'tools' })).service.connection).toEqual(before);
  });
});

describe.skipIf(!Terminal.available())('mcp restart on a terminal', () => {
  it('asks the usual trust question: n leaves it disabled (exit 7), y activates it', async () => {
    for (const [answer, status] of [['n', 7], ['y', 0]] as const) {
      const terminal = new Terminal(['/bin/sh', '-c', '"$@"; echo "[exit $?]"', 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'restart', 'tools'], { PATH: process.env.PATH ?? '' });
      try {
        await terminal.waitFor(/tools will run in a sandbox: it sees only the paths listed below(.|\n)*Trust and start \S+ \(service tools\)\? \[y\/N\]\s*$/m);
        terminal.type(`${answer}\r`);
        const screen = await terminal.waitFor(/\[exit \d+\]/);
        expect(screen).toContain(`[exit ${status}]`);
        if (answer === 'n') expect(screen).toContain('not activated: tools stays disabled');
      } finally {
        terminal.close();
      }
      expect((await client.call('services.get', { name: 'tools' })).service.connection.status).toBe(answer === 'y' ? 'active' : 'disabled');
    }
  }, 90_000);
});
