import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { ToolCallResult } from '../../src/core/index.js';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 18: every read command takes -o json|wide (and --json), documented in its own --help;
 * approvals, sessions and installs are named by a unique prefix of their id (4+ characters).
 * The fields a command's --help documents are read from that help and looked for in the JSON
 * it prints, so the help and the output cannot drift apart.
 */

const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;
let registry: LocalRegistry;
let digest: string;
/** What `wispctl install ... --yes` wrote to stderr (a pipe: one progress line per step). */
let installStderr = '';
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

/** Two seeded sessions whose ids start alike (abcd...), one titled with a terminal escape. */
const TWINS = ['abcd1111-2222-4333-8444-555555555555', 'abcd2222-2222-4333-8444-555555555555'];

function seedSessions(dataDir: string): void {
  const dir = path.join(dataDir, 'sessions');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const titles = ['first twin', 'evil \u001b[31mred\u001b[0m twin'];
  TWINS.forEach((id, i) => {
    const line = { type: 'session', id, title: titles[i], createdAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(path.join(dir, `${id}.jsonl`), `${JSON.stringify(line)}\n${JSON.stringify({ type: 'message', taskId: 't', at: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: `hello ${i}` } })}\n`, { mode: 0o600 });
  });
}

beforeAll(async () => {
  const npm12 = await ensureNpm12();
  registry = await LocalRegistry.start();
  await registry.publish({ name: 'tiny-mcp', version: '1.0.0', bin: { 'tiny-mcp': 'cli.js' } });
  seedSessions(home.path);
  daemon = await startWispd(home.path);
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await registerScenario(client, 'tools');
  await activate(client, 'tools');
  await client.call('installs.setSettings', { runtimeDirs: [npm12], registry: registry.url, timeoutMs: 120_000 });
  const installed = await ctl('install', 'tiny-mcp@1.0.0', '--bin', 'tiny-mcp', '--yes');
  expect(installed.code, installed.stderr).toBe(0);
  installStderr = installed.stderr;
  digest = (await client.call('installs.list')).attempts[0]?.digest ?? '';
  // One variable, so env list has an item to check.
  expect((await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'set', 'tools', 'TOKEN', '--session'], { input: 'v\n' })).code).toBe(0);
  await activate(client, 'tools');
}, NPM12_SETUP_MS);
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  await registry.close();
  killLeftovers();
  home.remove();
});

/** A tool call left waiting for its approval; resolves with the call's outcome. */
async function pendingCall(text: string): Promise<{ id: string; outcome: Promise<ToolCallResult | Error> }> {
  const requested = events.next((e) => e.type === 'approval.requested' && (e.approval.summary.arguments as { text?: unknown }).text === text);
  const service = (await client.call('services.get', { name: 'tools' })).service;
  const outcome = client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text } }).catch((error: unknown) => error as Error);
  const event = await requested;
  return { id: event.type === 'approval.requested' ? event.approval.id : '', outcome };
}

/** The fields a command's --help documents for -o json. */
async function documentedFields(args: string[]): Promise<string[]> {
  const help = await runWispctl([...args, '--help']);
  const line = /^ {2}-o json, --json {2}(.*); fields: (.+)$/m.exec(help.stdout);
  expect(line, `${args.join(' ')} --help documents -o json`).not.toBeNull();
  expect(help.stdout, args.join(' ')).toMatch(/^ {2}-o wide {10}\S/m);
  return (line?.[2] ?? '').split(', ');
}

describe('-o json|wide on every read command', () => {
  it('each read command\'s -o json parses and has every field its --help documents', async () => {
    const pending = await pendingCall('for the json test');
    // The command, then its operands (its --help is asked without them).
    const commands: [string[], string[]][] = [
      [['status'], []],
      [['mcp', 'list'], []],
      [['mcp', 'show'], ['tools']],
      [['mcp', 'tools'], ['tools']],
      [['mcp', 'logs'], ['tools']],
      [['mcp', 'env', 'list'], ['tools']],
      [['mcp', 'sources'], []],
      [['approvals'], []],
      [['sessions', 'list'], []],
      [['sessions', 'show'], [TWINS[0] ?? '']],
      [['install', 'list'], []],
      [['install', 'show'], [digest]],
      [['install', 'settings'], []],
      [['model', 'show'], []],
      [['daemon', 'status'], []],
    ];
    for (const [command, operands] of commands) {
      const name = command.join(' ');
      const fields = await documentedFields(command);
      const run = await ctl('-o', 'json', ...command, ...operands);
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      const value = JSON.parse(run.stdout) as unknown;
      const items = (Array.isArray(value) ? value : [value]) as Record<string, unknown>[];
      expect(items.length, name).toBeGreaterThan(0);
      for (const item of items) for (const field of fields) expect(item, `${name}: ${field}`).toHaveProperty(field);
      // --json, after the command, is the same thing.
      if (name === 'mcp list') expect(JSON.parse((await ctl(...command, '--json')).stdout)).toEqual(value);
    }
    await client.call('approvals.respond', { id: pending.id, decision: 'deny' });
    await pending.outcome;
  });

  it('events --since past the newest event says so and ends (issue 33: it hung after the error)', async () => {
    const { lastSeq } = await client.call('daemon.status');
    for (const args of [[], ['--follow']]) {
      const run = await ctl('events', '--since', String(lastSeq + 1000), ...args);
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr).toContain(`since ${lastSeq + 1000} is ahead of the newest event`);
      expect(run.stdout).toBe('');
    }
  });

  it('events -o json is JSON Lines: one event object per line, with the documented fields', async () => {
    const fields = await documentedFields(['events']);
    const run = await ctl('events', '-o', 'json');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) {
      const event = JSON.parse(line) as Record<string, unknown>;
      for (const field of fields) expect(event).toHaveProperty(field);
    }
    expect((await runWispctl(['events', '--help'])).stdout).toContain('as JSON Lines on stdout (one object per line)');
  });

  it('-o wide adds the columns its help names: full ids, origins, times', async () => {
    const { service } = await client.call('services.get', { name: 'tools' });
    const list = await ctl('mcp', 'list', '-o', 'wide');
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME +ID +STATE +PID +TOOLS +SINCE +TRANSPORT +VERSION +ORIGIN +COMMAND OR URL +REASON$/);
    expect(list.stdout).toMatch(new RegExp(`^tools +${service.id} +active +\\d+ +2 .* stdio +\\d+ +manual +${process.execPath.replace(/[/.]/g, '\\$&')} `, 'm'));
    expect(list.stdout).toMatch(/^tiny-mcp .* npm tiny-mcp@1\.0\.0 /m);
    expect((await ctl('mcp', 'list')).stdout.split('\n')[0]).not.toContain('ORIGIN');
    expect((await ctl('-o', 'wide', 'mcp', 'tools', 'tools')).stdout).toMatch(/^tools +\S+ +echo +mcp_\w+ +- +text\* +readOnly +Echoes its text argument\.$/m);
    expect((await ctl('install', 'list', '-o', 'wide')).stdout).toMatch(new RegExp(`^${digest} +tiny-mcp@1\\.0\\.0 +succeeded +tiny-mcp +[0-9a-f-]{36} +\\S+ +\\S+ +${registry.url.replace(/[/.]/g, '\\$&')}`, 'm'));
    expect((await ctl('sessions', '-o', 'wide')).stdout.split('\n')[0]).toMatch(/^ID +TITLE +MESSAGES +LAST TASK +TASK ID +ROUNDS +CREATED +UPDATED$/);
    expect((await ctl('status', '-o', 'wide')).stdout).toMatch(/^you: +client client-\d+$/m);
    const bad = await ctl('status', '-o', 'yaml');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are json, wide");
  });
});

describe('the install progress bar (issue 37)', () => {
  it('ends full when the install succeeds: its last line is every step done, not the last one started', () => {
    const bars = installStderr.split('\n').filter((line) => line.startsWith('['));
    expect(bars.length).toBeGreaterThan(2);
    expect(bars[0]).toMatch(/^\[\.{24}\] 1\/\d+ /);
    const total = /^\[[#.]+\] \d+\/(\d+) /.exec(bars[0] ?? '')?.[1];
    expect(bars.at(-1)).toBe(`[${'#'.repeat(24)}] ${total}/${total} done`);
    // The step before it had the bar short of full (as every step line does: the steps before it are done).
    expect(bars.at(-2)).toMatch(new RegExp(`^\\[#+\\.+\\] ${total}/${total} register$`));
  });
});

describe('unique id prefixes', () => {
  it('approve and deny take the first 4+ characters of an approval id', async () => {
    const first = await pendingCall('approved by prefix');
    const approved = await ctl('approve', first.id.slice(0, 6));
    expect(approved).toMatchObject({ code: 0, stdout: `${first.id}: approved\n` });
    expect(await first.outcome).toMatchObject({ text: 'approved by prefix' });
    const second = await pendingCall('denied by prefix');
    expect((await ctl('deny', second.id.slice(0, 4).toUpperCase())).stdout).toBe(`${second.id}: denied\n`);
    expect(await second.outcome).toMatchObject({ code: 'APPROVAL_DENIED' });
  });

  it('a prefix under 4 characters is refused; one that matches nothing is not found', async () => {
    const short = await ctl('approve', 'abc');
    expect(short).toMatchObject({ code: 2, stdout: '' });
    expect(short.stderr).toBe('wispctl: give at least 4 characters of the approval id (wispctl approvals --all lists them) (INVALID_PARAMS)\n');
    const none = await ctl('sessions', 'show', 'ffff0');
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no session id starts with ffff0 (wispctl sessions lists them) (SESSION_NOT_FOUND)');
  });

  it('an ambiguous prefix lists the candidates, sanitized, and exits 2; one more character picks one', async () => {
    const run = await ctl('sessions', 'show', 'abcd');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      [
        'wispctl: abcd is the start of 2 session ids; give more characters:',
        `    ${TWINS[0]}  first twin  (updated 2026-01-01T00:00:00.000Z)`,
        `    ${TWINS[1]}  evil \\x1b[31mred\\x1b[0m twin  (updated 2026-01-01T00:00:00.000Z) (INVALID_PARAMS)`,
        '',
      ].join('\n'),
    );
    const one = await ctl('sessions', 'show', 'abcd2');
    expect(one).toMatchObject({ code: 0, stdout: 'user: hello 1\n' });
  });

  it('install show, and sessions delete, take a prefix too', async () => {
    const show = await ctl('install', 'show', digest.slice(0, 5));
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`digest:     ${digest}`);
    const deleted = await ctl('sessions', 'delete', 'abcd1');
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${TWINS[0]}\n` });
    expect((await ctl('sessions', 'show', 'abcd')).stdout).toBe('user: hello 1\n');
  });
});
