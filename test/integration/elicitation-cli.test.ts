import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Elicitation, Service, WispEvent } from '../../src/core/index.js';
import { EventLog } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * wispctl elicitations / elicitation answer, and the inline question in mcp call: a real
 * daemon, the stdio fixture that asks in form and URL mode from inside its tools, and a
 * caller whose call is waiting. What the user sees (stdout, stderr, exit status, the screen)
 * and what the server got back (the tool's result) are checked.
 */
const home = tempDir();
const elicitServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs');
let daemon: RunningDaemon;
let caller: WispClient;
let watcher: WispClient;
let log: EventLog;
let service: Service;
let callerId: string;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  caller = await daemon.connect();
  callerId = (await caller.call('daemon.status')).you.clientId;
  // Subscribed to everything: requests of the server are put before this client (else answered cancel).
  watcher = await daemon.connect();
  log = await EventLog.follow(watcher);
  // The caller's approvals are answered here; those of wispctl mcp call are answered in its terminal.
  watcher.onEvent((event) => {
    if (event.type === 'approval.requested' && event.approval.requester.clientId === callerId) void watcher.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  ({ service } = await caller.call('services.register', { name: 'asker', command: process.execPath, args: [elicitServer], timeoutMs: 120_000 }));
  ({ service } = await caller.call('services.activate', { id: service.id, configVersion: service.configVersion }));
});
afterAll(async () => {
  await caller.close();
  await watcher.close();
  killLeftovers();
  home.remove();
});

const wispctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { env: daemonEnv() });
const answer = (text: string) => JSON.parse(text) as { action: string; content: Record<string, unknown> | null };

/** The caller calls `tool`; resolves with the elicitation it caused and the call's result. */
async function asked(tool: 'ask_form' | 'ask_url'): Promise<{ elicitation: Elicitation; result: Promise<{ action: string; content: Record<string, unknown> | null }> }> {
  // The previous test ended on a terminal's output: its request's events may still be on
  // their way to the watcher, and "the next" would match them (seen under load).
  await log.caughtUp();
  const requested = log.next((e) => e.type === 'elicitation.requested' && e.elicitation.status === 'pending' && e.elicitation.owners.some((o) => o.clientId === callerId));
  const result = caller.call('tools.call', { serviceId: service.id, toolName: tool, arguments: {} }).then((r) => answer(r.text));
  const { elicitation } = (await requested) as Extract<WispEvent, { type: 'elicitation.requested' }>;
  return { elicitation, result };
}

function terminal(...args: string[]): Terminal {
  const script = 'trap : INT; "$@"; echo "[exit $?]"';
  return new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, ...args], { PATH: process.env.PATH ?? '' });
}

describe('wispctl elicitations and elicitation answer', () => {
  it('lists an open request with the server\'s text sanitized; -o json has it whole; --accept on a URL request by id prefix', async () => {
    const { elicitation, result } = await asked('ask_url');
    const listed = await wispctl('elicitations');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(elicitation.id);
    expect(listed.stdout).toMatch(/url consent\.example\.com/);
    expect(listed.stdout).toContain('MESSAGE (from the server, untrusted)');
    expect(listed.stdout).toContain('Please sign the');
    expect(listed.stdout).not.toContain('\u001b');
    const json = await wispctl('elicitations', '-o', 'json');
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id: elicitation.id, url: 'https://consent.example.com/sign?id=42', host: 'consent.example.com', status: 'pending' })]);
    // Every field its --help promises a script is there.
    const documented = /fields: (.*)$/m.exec((await wispctl('elicitations', '--help')).stdout)?.[1]?.split(', ') ?? [];
    expect(documented).toContain('requestedSchema');
    expect(Object.keys((JSON.parse(json.stdout) as Record<string, unknown>[])[0] ?? {})).toEqual(expect.arrayContaining(documented));
    const done = await wispctl('elicitation', 'answer', elicitation.id.slice(0, 8), '--accept');
    expect(done).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`elicitation ${elicitation.id} accepted by client-\\d+`)) });
    expect(await result).toEqual({ action: 'accept', content: null });
    expect((await wispctl('elicitations')).stdout).toContain('No server is asking for input.');
  });

  it('accepts a form with key=value fields typed by the schema: the server gets them (defaults filled in)', async () => {
    const { elicitation, result } = await asked('ask_form');
    const done = await wispctl('elicitation', 'answer', elicitation.id.slice(0, 6), 'name=Ada Lovelace', 'age=36');
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('accepted');
    expect(await result).toEqual({ action: 'accept', content: { name: 'Ada Lovelace', age: 36, plan: 'free' } });
  });

  it('refuses invalid values with ELICITATION_INVALID and sends nothing; then --content, and --decline passes on', async () => {
    const { elicitation, result } = await asked('ask_form');
    for (const values of [['name=Ada', 'age=old'], ['name=Ada', 'plan=gold'], ['name=Ada', 'color=red'], ['name=A']]) {
      const refused = await wispctl('elicitation', 'answer', elicitation.id, ...values);
      expect(refused.code, values.join(' ')).not.toBe(0);
      expect(refused.stderr, values.join(' ')).toContain('ELICITATION_INVALID');
      expect(refused.stdout).toBe('');
    }
    const badJson = await wispctl('elicitation', 'answer', elicitation.id, '--content', '{"name":"Ada","age":"old"}');
    expect(badJson.stderr).toContain('ELICITATION_INVALID');
    expect(JSON.parse((await wispctl('elicitations', '--json')).stdout)).toEqual([expect.objectContaining({ id: elicitation.id, status: 'pending' })]);
    const declined = await wispctl('elicitation', 'answer', elicitation.id, '--decline', '-o', 'json');
    expect(declined.code).toBe(0);
    expect(JSON.parse(declined.stdout)).toMatchObject({ id: elicitation.id, status: 'declined' });
    expect(await result).toEqual({ action: 'decline', content: null });
    const late = await wispctl('elicitation', 'answer', elicitation.id, '--cancel');
    expect(late.stderr).toContain('ELICITATION_NOT_PENDING');
  });

  it('without a terminal and without an answer, says how to give one (nothing sent)', async () => {
    const { elicitation, result } = await asked('ask_form');
    const refused = await wispctl('elicitation', 'answer', elicitation.id);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/no terminal to ask on/);
    await wispctl('elicitation', 'answer', elicitation.id, '--content', '{"name":"Grace","plan":"pro"}');
    expect(await result).toEqual({ action: 'accept', content: { name: 'Grace', age: 30, plan: 'pro' } });
  });
});

describe.skipIf(!Terminal.available())('elicitations asked on a terminal', () => {
  it('elicitation answer asks each field by its type; a value refused is asked again; the server gets the content', async () => {
    const { elicitation, result } = await asked('ask_form');
    const screen = terminal('elicitation', 'answer', elicitation.id.slice(0, 8));
    try {
      await screen.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      expect(screen.screen()).toMatch(/The server says \(untrusted text, not from wispctl\):\n\s+\| Who are you\?\n\s+\| Really\./);
      screen.type('y\r');
      await screen.waitFor(/name \(string, required\): *$/m);
      screen.type('A\r');
      await screen.waitFor(/age \(integer, optional, Enter skips\): *$/m);
      screen.type('old\r');
      await screen.waitFor(/age: must be a number, not "old": try again\n\s+age \(integer, optional, Enter skips\): *$/m);
      screen.type('41\r');
      await screen.waitFor(/plan \(string, optional, Enter skips\): *$/m);
      screen.type('\r');
      // The daemon refuses the one-letter name: said, and the form is asked again; nothing was sent.
      await screen.waitFor(/\/name must NOT have fewer than 2 characters \(ELICITATION_INVALID\)[\s\S]*Fill in the form\? \(no declines\) \[y\/N\]\s*$/);
      screen.type('y\r');
      await screen.waitFor(/name \(string, required\): *$/m);
      screen.type('Ada\r');
      await screen.waitFor(/age \(integer, optional, Enter skips\): *$/m);
      screen.type('41\r');
      await screen.waitFor(/plan \(string, optional, Enter skips\): *$/m);
      screen.type('pro\r');
      expect(await screen.waitFor(/\[exit \d+\]/)).toMatch(/accepted by client-\d+\n\[exit 0\]/);
      expect(await result).toEqual({ action: 'accept', content: { name: 'Ada', age: 41, plan: 'pro' } });
    } finally {
      screen.close();
    }
  }, 60_000);

  it('mcp call asks its own URL request inline: full URL and host, never opened; yes accepts', async () => {
    await log.caughtUp();
    const requested = log.next((e) => e.type === 'elicitation.requested');
    const screen = terminal('mcp', 'call', 'asker', 'ask_url');
    try {
      await screen.waitFor(/\[y\/N\]\s*$/m);
      screen.type('y\r');
      await screen.waitFor(/Did you complete it at consent\.example\.com\? \(no declines\) \[y\/N\] *$/m);
      const shown = screen.screen();
      expect(shown).toContain('https://consent.example.com/sign?id=42');
      expect(shown).toMatch(/host: consent\.example\.com/);
      expect(shown).toContain('wispctl never opens it');
      const { elicitation } = (await requested) as Extract<WispEvent, { type: 'elicitation.requested' }>;
      // Owned by wispctl's own call (not the test's caller).
      expect(elicitation.owners.map((o) => o.clientId).filter((id) => id !== callerId)).toHaveLength(1);
      screen.type('y\r');
      const end = await screen.waitFor(/\[exit \d+\]/);
      expect(end).toContain('{"action":"accept","content":null}');
      expect(end).toMatch(/\[exit 0\]/);
    } finally {
      screen.close();
    }
  }, 60_000);

  it('mcp call: no declines the inline form, and the server hears decline', async () => {
    const screen = terminal('mcp', 'call', 'asker', 'ask_form');
    try {
      await screen.waitFor(/\[y\/N\]\s*$/m);
      screen.type('y\r');
      await screen.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      screen.type('n\r');
      const end = await screen.waitFor(/\[exit \d+\]/);
      expect(end).toContain('{"action":"decline","content":null}');
      expect(end).toMatch(/declined by client-\d+[\s\S]*\[exit 0\]/);
    } finally {
      screen.close();
    }
  }, 60_000);

  it('Ctrl-C: in elicitation answer leaves the request pending; in mcp call cancels it (the server hears cancel), exit 130', async () => {
    const { elicitation, result } = await asked('ask_form');
    const answering = terminal('elicitation', 'answer', elicitation.id);
    try {
      await answering.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      answering.press('C-c');
      expect(await answering.waitFor(/\[exit \d+\]/)).toMatch(/^cancelled\n\[exit 130\]/m);
      expect(JSON.parse((await wispctl('elicitations', '-o', 'json')).stdout)).toEqual([expect.objectContaining({ id: elicitation.id, status: 'pending' })]);
      await wispctl('elicitation', 'answer', elicitation.id, '--cancel');
      expect(await result).toEqual({ action: 'cancel', content: null });
    } finally {
      answering.close();
    }
    await log.caughtUp();
    const resolved = log.next((e) => e.type === 'elicitation.resolved');
    const calling = terminal('mcp', 'call', 'asker', 'ask_form');
    try {
      await calling.waitFor(/\[y\/N\]\s*$/m);
      calling.type('y\r');
      await calling.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      calling.press('C-c');
      expect(await calling.waitFor(/\[exit \d+\]/)).toMatch(/^cancelled\n\[exit 130\]/m);
      expect(await resolved).toMatchObject({ elicitation: { status: 'cancelled', by: expect.stringMatching(/^client-\d+$/) } });
    } finally {
      calling.close();
    }
  }, 60_000);
});
