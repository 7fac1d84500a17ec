import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { EventLog, activate } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 12, item 1: what a server (or a config) says must never rewrite the terminal of
 * whoever looks at it. A hostile server (fixtures/servers/hostile/forged-title.mjs) puts CR,
 * ESC sequences, C1 controls, bidi overrides and zero-width characters in its tool title,
 * description, annotations, server info, stderr, failure messages and results; a service's
 * cwd holds cursor movements. Every wispctl screen must show them escaped, and every prompt
 * must show what the daemon vouches for (service, registered tool name, arguments, command,
 * args, cwd) apart from what the server merely claims.
 */

const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
/** Every code point that may move the cursor, erase, reorder or hide text (LF aside), or a lone surrogate. */
function unsafe(cp: number): boolean {
  return (
    (cp < 0x20 && cp !== 0x0a) ||
    (cp >= 0x7f && cp <= 0x9f) ||
    [0xad, 0x61c, 0x180e, 0x2028, 0x2029, 0xfeff].includes(cp) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x206f) ||
    (cp >= 0xfff9 && cp <= 0xfffb) ||
    (cp >= 0xd800 && cp <= 0xdfff)
  );
}

function expectClean(text: string): void {
  let index = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (unsafe(cp)) expect(`U+${cp.toString(16).padStart(4, '0')} at ${index} in ${JSON.stringify(text)}`).toBeNull();
    index += ch.length;
  }
}

const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;
let env: NodeJS.ProcessEnv;
const run = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { env });

/** Starts `wispctl mcp call` without a terminal; resolves the approval id it waits on. */
function callInBackground(tool: string, args = '{}') {
  const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, 'mcp', 'call', 'forged', tool, args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const waiting = new Promise<string>((resolve) =>
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      const id = /waiting for a human: wispctl approve (\S+)/.exec(stderr)?.[1];
      if (id !== undefined) resolve(id);
    }),
  );
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { waiting, exited, out: () => stdout, err: () => stderr };
}

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-render' }) });
  env = daemonEnv();
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: url });
  await client.call('services.register', { name: 'forged', command: process.execPath, args: [hostileServer, 'forged-title'] });
  const active = await activate(client, 'forged');
  expect(active.connection.status).toBe('active');
});
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

describe('untrusted text on the terminal', () => {
  it('wispctl approvals: the registered tool name is vouched for; the forged title is the server\'s, escaped', async () => {
    const call = callInBackground('delete_all', '{"path":"/"}');
    const id = await call.waiting;
    const inline = call.err();
    const listed = (await run('approvals')).stdout;
    for (const out of [inline, listed]) {
      expectClean(out);
      expect(out).toMatch(/^ {2}tool: +delete_all$/m);
      expect(out).not.toMatch(/^\s*tool:\s+read_file/m);
      expect(out).toMatch(/^ {2}arguments: +\{"path":"\/"\}$/m);
      expect(out).toContain('from the server, not verified:');
      expect(out).toContain('title:      Delete everything\\r\\x1b[2K  tool:       read_file (Read a file)');
      expect(out).toContain('annotated:  Read\\x1b[1A\\x1b[2K file');
    }
    await client.call('approvals.respond', { id, decision: 'deny' });
    expect(await call.exited).toBe(7);
  });

  it.runIf(Terminal.available())('the inline "Run this call?" prompt on a real terminal shows delete_all, not the forged read_file', async () => {
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'call', 'forged', 'delete_all', '{}'], { PATH: process.env.PATH ?? '' }, { width: 200, height: 50 });
    try {
      const screen = await terminal.waitFor(/\[y\/N\]/);
      expectClean(screen);
      expect(screen).toMatch(/^ {2}tool: +delete_all$/m);
      expect(screen).not.toMatch(/^\s*tool:\s+read_file/m);
      expect(screen).toContain('Delete everything\\r\\x1b[2K');
      expect(screen).toMatch(/Run delete_all \(service forged\)\? \[y\/N\]/);
      terminal.type('n');
      terminal.press('Enter');
      expect(await terminal.waitFor(/APPROVAL_DENIED/)).toContain('the call to delete_all was denied');
    } finally {
      terminal.close();
    }
  });

  it.runIf(Terminal.available())('withdraws the inline prompt when another client answers the approval first', async () => {
    const asked = events.next((e) => e.type === 'approval.requested' && JSON.stringify(e.approval.summary.arguments) === '{"who":"elsewhere"}');
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'call', 'forged', 'delete_all', '{"who":"elsewhere"}'], { PATH: process.env.PATH ?? '' }, { width: 200, height: 50 });
    try {
      await terminal.waitFor(/Run delete_all \(service forged\)\? \[y\/N\]/);
      const requested = await asked;
      if (requested.type !== 'approval.requested') throw new Error('no approval.requested for the call');
      await client.call('approvals.respond', { id: requested.approval.id, decision: 'deny' });
      const screen = await terminal.waitFor(/APPROVAL_DENIED/);
      expect(screen).toContain(`(approval ${requested.approval.id} is denied: this question is withdrawn)`);
      // No prompt is left open: the command ends with the denial (7; tmux does not always record the status).
      expect([7, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  });

  it('the activation prompt shows the real command, and the cwd that holds cursor movements escaped', async () => {
    const dir = path.join(home.path, 'act\u001b[2A\u001b[2K  command: /usr/bin/true\u001b[1B');
    mkdirSync(dir, { recursive: true });
    await client.call('services.register', { name: 'movedcwd', command: process.execPath, args: [hostileServer, 'echo'], cwd: dir });

    const piped = await run('mcp', 'activate', 'movedcwd');
    expect(piped.code).toBe(2);
    expectClean(piped.stderr);
    expect(piped.stderr).toContain(`  command:      ${process.execPath}\n`);
    expect(piped.stderr).toContain('act\\x1b[2A\\x1b[2K  command: /usr/bin/true\\x1b[1B');

    if (!Terminal.available()) return;
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'activate', 'movedcwd'], { PATH: process.env.PATH ?? '' }, { width: 200, height: 50 });
    try {
      const screen = await terminal.waitFor(/\[y\/N\]/);
      expectClean(screen);
      expect(screen).toMatch(new RegExp(`^ {2}command: +${process.execPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
      expect(screen).not.toMatch(/^\s*command:\s+\/usr\/bin\/true/m);
      expect(screen).toContain('act\\x1b[2A\\x1b[2K  command: /usr/bin/true\\x1b[1B');
      terminal.type('n');
      terminal.press('Enter');
      await terminal.waitFor(/not activated|nothing changed|refused/i);
    } finally {
      terminal.close();
    }
  });

  it('mcp list, show, tools and logs show the server\'s text escaped; --json stays exact', async () => {
    const show = await run('mcp', 'show', 'forged');
    const tools = await run('mcp', 'tools', 'forged');
    const logs = await run('mcp', 'logs', 'forged');
    const list = await run('mcp', 'list');
    for (const r of [show, tools, logs, list]) {
      expect(r.code).toBe(0);
      expectClean(r.stdout + r.stderr);
    }
    expect(show.stdout).toMatch(/^server: +forged\\x1b\[2J\\u202eserver 6\.6\.6\\r\\x1b\[2K {2}command: \/usr\/bin\/true \(what the server says\)$/m);
    // One line in a table: whitespace (LF, U+2028, BOM count as such) collapsed, the rest escaped.
    expect(tools.stdout).toContain('Reads a file.\\u202e elif daer \\u202c\\u200bzero\\u2060width \\x9b2K\\x7f tool: read_file');
    expect(logs.stdout).toContain('starting\\x1b]0;pwned title\\x07\n');
    expect(logs.stdout).toContain('line two\\r\\x1b[2K  all good: nothing to see \\x1b[31mred\\x1b[0m \\u202eevil\\u202c\n');
    expect(list.stdout).toMatch(/^forged\s+active\s/m);

    // --json: exact JSON (the same strings as on the socket), still with no raw control bytes.
    const json = await run('--json', 'mcp', 'tools', 'forged');
    expectClean(json.stdout);
    const parsed = JSON.parse(json.stdout) as { name: string; title: string | null; description: string }[];
    const { tools: onSocket } = await client.call('tools.list', {});
    expect(parsed.find((t) => t.name === 'delete_all')).toEqual(onSocket.find((t) => t.name === 'delete_all'));
    expect(parsed.find((t) => t.name === 'delete_all')?.description).toContain('\u202e');
  });

  it('a failed service\'s reason is escaped in mcp list and events', async () => {
    await client.call('services.register', {
      name: 'junk',
      command: process.execPath,
      args: ['-e', 'process.stdout.write("\\u001b[2J\\u202ejunk\\r\\n"); process.stderr.write("bad\\u001b[31m\\n"); process.exit(3)'],
    });
    await activate(client, 'junk');
    const list = await run('mcp', 'list');
    expectClean(list.stdout);
    expect(list.stdout).toMatch(/^junk\s+failed\s/m);
    const shown = await run('mcp', 'show', 'junk');
    expectClean(shown.stdout);
    expect(shown.stdout).toMatch(/^state: +failed /m);
  });

  it('error messages that carry a server\'s text are escaped: a tool failure and a JSON-RPC error', async () => {
    for (const [tool, pattern] of [
      // The server's text once, escaped, then our line (issue 18 bug 10).
      ['fail', /^it failed\\r\\x1b\[2K {2}approved by: you \\x1b\[8mhidden\\u202e\nwispctl: forged\/fail reported an error \(TOOL_ERROR\)$/m],
      ['boom', /^wispctl: .*boom\\r\\x1b\[2K {2}result: ok \\u202esecret\\u200b \([A-Z_]+\)$/m],
    ] as const) {
      const call = callInBackground(tool);
      await client.call('approvals.respond', { id: await call.waiting, decision: 'approve' });
      const code = await call.exited;
      expect(code).not.toBe(0);
      expectClean(call.err() + call.out());
      expect(call.err()).toMatch(pattern);
    }
    await events.waitFor((e) => e.type === 'tool.call.failed' && e.call.toolName === 'boom');
    const history = await run('events');
    expectClean(history.stdout);
    expect(history.stdout).toMatch(/tool\.call\.failed {2}forged\/fail TOOL_ERROR: fail reported an error: it failed\\r\\x1b\[2K/);
    const json = await run('--json', 'events');
    expectClean(json.stdout);
    const failed = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; message?: string })
      .find((e) => e.type === 'tool.call.failed' && e.message?.includes('it failed') === true);
    expect(failed?.message).toContain('\r\u001b[2K');
  });

  it('a tool\'s result text keeps its lines but shows CR and escapes', async () => {
    const call = callInBackground('echo', JSON.stringify({ text: 'first line\nsecond\r\u001b[2K\u202eline\r\nthird' }));
    await client.call('approvals.respond', { id: await call.waiting, decision: 'approve' });
    expect(await call.exited).toBe(0);
    expectClean(call.out());
    expect(call.out()).toBe('first line\nsecond\\r\\x1b[2K\\u202eline\nthird\n');
  });

  it.runIf(Terminal.available())('chat: the approval question shows the registered tool, the server\'s title labelled and escaped, the answer escaped', async () => {
    const deleteAll = (await client.call('tools.list', {})).tools.find((t) => t.name === 'delete_all')?.modelName ?? '';
    mock.enqueue(
      { events: toolCallEvents([{ id: 'c1', name: deleteAll, arguments: '{}' }]) },
      { events: textEvents('done\r\u001b[2K\u202eall fine') },
    );
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'chat'], { PATH: process.env.PATH ?? '' }, { width: 200, height: 50 });
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('clean up');
      terminal.press('Enter');
      const asked = await terminal.waitFor(/\[y\/N\]/);
      expectClean(asked);
      expect(asked).toContain('tool call: forged/delete_all {}');
      expect(asked).toContain('Delete everything\\r\\x1b[2K  tool:       read_file (Read a file)');
      expect(asked).toMatch(/from the server, not verified/);
      expect(asked).toMatch(/Run delete_all \(service forged\)\? \[y\/N\]/);
      terminal.type('n');
      terminal.press('Enter');
      const answered = await terminal.waitFor(/all fine[\s\S]*you>\s*$/m);
      expectClean(answered);
      expect(answered).toContain('done\\r\\x1b[2K\\u202eall fine');
      terminal.type('/quit');
      terminal.press('Enter');
      expect([0, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  });
});
