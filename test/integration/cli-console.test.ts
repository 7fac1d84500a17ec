import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Task, ToolCallResult, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 18: the approval console (`approvals --watch`) and bug 14 (chat): each in a real
 * terminal (tmux) under a shell that prints `[exit N]`, so what a user sees, exit status
 * included, is read from the screen.
 */

const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;
let serviceId: string;

beforeAll(async () => {
  const url = await mock.start();
  // No DEEPSEEK_API_KEY: the first test sees the daemon without a key.
  daemon = await startWispd(home.path);
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
  await registerScenario(client, 'tools', ['--call-tools']);
  serviceId = (await activate(client, 'tools')).id;
});
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

function wispctl(...args: string[]): Terminal {
  const script = 'trap : INT; "$@"; echo "[exit $?]"';
  // Wide enough that no line of ours is wrapped by the terminal.
  return new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, ...args], { PATH: process.env.PATH ?? '' }, { width: 250, height: 60 });
}

/** An echo call left waiting for its approval: its approval id, and the call's outcome. */
async function pendingCall(text: string): Promise<{ id: string; outcome: Promise<ToolCallResult | { code?: string }> }> {
  const requested = events.next((e) => e.type === 'approval.requested' && (e.approval.summary.arguments as { text?: unknown }).text === text);
  const outcome = client.call('tools.call', { serviceId, toolName: 'echo', arguments: { text } }).catch((error: unknown) => error as { code?: string });
  const event = await requested;
  return { id: event.type === 'approval.requested' ? event.approval.id : '', outcome };
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const question = (id: string, text: string): RegExp => new RegExp(`approval ${id} \\(pending\\): a tool call\\n[\\s\\S]*arguments: +\\{"text":"${escaped(text)}"\\}[\\s\\S]*Run echo \\(service tools\\)\\? \\[y/N\\] *$`, 'm');

describe.skipIf(!Terminal.available())('wispctl approvals --watch', () => {
  it('asks each pending approval in turn: those open at the start, then each as it arrives', async () => {
    const first = await pendingCall('open before the console');
    const second = await pendingCall('also open before');
    const terminal = wispctl('approvals', '--watch');
    try {
      await terminal.waitFor(question(first.id, 'open before the console'));
      // One at a time: the second is not asked yet.
      expect(terminal.screen()).not.toContain('also open before');
      terminal.type('y');
      terminal.press('Enter');
      await terminal.waitFor(question(second.id, 'also open before'));
      expect(await first.outcome).toMatchObject({ text: 'open before the console' });
      expect(terminal.screen()).toMatch(new RegExp(`^${first.id}: approved$`, 'm'));
      terminal.type('n');
      terminal.press('Enter');
      expect(await second.outcome).toMatchObject({ code: 'APPROVAL_DENIED' });
      await terminal.waitFor(new RegExp(`^${second.id}: denied\\nwaiting for approvals`, 'm'));

      const later = await pendingCall('asked while watching');
      await terminal.waitFor(question(later.id, 'asked while watching'));
      terminal.type('y');
      terminal.press('Enter');
      expect(await later.outcome).toMatchObject({ text: 'asked while watching' });
    } finally {
      terminal.close();
    }
  });

  it('an approval answered elsewhere while it is asked is reported and skipped', async () => {
    const terminal = wispctl('approvals', '--watch');
    try {
      await terminal.waitFor(/^waiting for approvals/m);
      const elsewhere = await pendingCall('answered elsewhere');
      await terminal.waitFor(question(elsewhere.id, 'answered elsewhere'));
      await client.call('approvals.respond', { id: elsewhere.id, decision: 'approve' });
      await terminal.waitFor(new RegExp(`^\\(approval ${elsewhere.id} is approved: this question is withdrawn\\)\\nwaiting for approvals`, 'm'));
      expect(await elsewhere.outcome).toMatchObject({ text: 'answered elsewhere' });
      // The console goes on: the next one is asked.
      const next = await pendingCall('after the withdrawn one');
      await terminal.waitFor(question(next.id, 'after the withdrawn one'));
      terminal.type('y');
      terminal.press('Enter');
      expect(await next.outcome).toMatchObject({ text: 'after the withdrawn one' });
    } finally {
      terminal.close();
    }
  });

  it('Ctrl-C stops the console with exit 130 and leaves the approval being asked pending', async () => {
    const left = await pendingCall('left pending');
    const terminal = wispctl('approvals', '--watch');
    try {
      await terminal.waitFor(question(left.id, 'left pending'));
      terminal.press('C-c');
      const screen = await terminal.waitFor(/\[exit \d+\]/);
      expect(screen).toMatch(new RegExp(`^stopped watching; approval ${left.id} is still pending \\(wispctl approve ${left.id}, or deny\\)\\n\\[exit 130\\]`, 'm'));
      expect(screen).not.toMatch(/cancelled|AbortError|\n\s+at /);
      const open = (await client.call('approvals.list')).approvals.find((a) => a.id === left.id);
      expect(open?.state.status).toBe('pending');
    } finally {
      terminal.close();
    }
    await client.call('approvals.respond', { id: left.id, decision: 'deny' });
    await left.outcome;
  });

  it('without a terminal it says how to answer instead', async () => {
    const run = await runWispctl(['--socket', daemon.socket, 'approvals', '--watch']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--watch asks y/N on a terminal and stdin is not one: use wispctl approvals, then wispctl approve ID or deny ID');
  });
});

function taskEnd(taskId: string): Promise<Task> {
  return events
    .waitFor((e) => e.type === 'task.state' && e.task.id === taskId && !['running', 'awaiting_approval'].includes(e.task.state.status))
    .then((e) => (e as Extract<WispEvent, { type: 'task.state' }>).task);
}

describe.skipIf(!Terminal.available())('wispctl chat (bug 14)', () => {
  it('a missing model key is found at the start: the error and its hint, before any prompt', async () => {
    expect((await client.call('model.getSettings')).settings.key).toBe('none');
    const before = (await client.call('sessions.list')).sessions.length;
    const terminal = wispctl('chat');
    try {
      const screen = await terminal.waitFor(/\[exit \d+\]/);
      expect(screen).toMatch(/^wispctl: no model API key: set one with `wispctl model set-key` \(or `--session` for this daemon run only\), or start the daemon with DEEPSEEK_API_KEY \(MODEL_NO_KEY\)\n\[exit [1-9]\d*\]/m);
      expect(screen).not.toContain('you>');
    } finally {
      terminal.close();
    }
    const send = await runWispctl(['--socket', daemon.socket, 'send', 'hello']);
    expect(send.stderr).toContain('(MODEL_NO_KEY)');
    expect(send.stdout).toBe('');
    expect((await client.call('sessions.list')).sessions.length).toBe(before);
    await client.call('model.setKey', { value: 'sk-console', storage: 'session' });
  });

  it('/help is answered here and never sent to the model; a mistyped /command neither', async () => {
    const terminal = wispctl('chat');
    try {
      await terminal.waitFor(/you>\s*$/m);
      const sent = mock.requests.length;
      terminal.type('/help');
      terminal.press('Enter');
      await terminal.waitFor(/chat commands \(answered here, never sent to the model\):\n {2}\/help +this list[\s\S]*you>\s*$/m);
      terminal.type('/halp');
      terminal.press('Enter');
      await terminal.waitFor(/^unknown chat command \/halp; \/help lists them\nyou>\s*$/m);
      terminal.type('/quit');
      terminal.press('Enter');
      expect(await terminal.waitFor(/\[exit \d+\]/)).toContain('[exit 0]');
      expect(mock.requests.length).toBe(sent);
    } finally {
      terminal.close();
    }
  });

  it('the model reads media markers where the media was; sessions show names service/tool', async () => {
    const mediaName = (await client.call('tools.list')).tools.find((t) => t.name === 'media')?.modelName ?? '';
    mock.enqueue({ events: toolCallEvents([{ id: 'm1', name: mediaName, arguments: '{}' }]) }, { events: textEvents('Media seen.') });
    const { session } = await client.call('sessions.create', { title: 'media' });
    const asked = events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'media');
    const { task } = await client.call('sessions.send', { id: session.id, text: 'show me media' });
    const approval = await asked;
    if (approval.type === 'approval.requested') await client.call('approvals.respond', { id: approval.approval.id, decision: 'approve' });
    expect((await taskEnd(task.id)).state.status).toBe('completed');
    const markers = [
      'here is everything',
      '[omitted image image/png, 14 bytes]',
      '[omitted audio audio/wav, 8 bytes]',
      'embedded text',
      '[omitted resource application/octet-stream, 10 bytes]',
      '[omitted resource_link]',
    ];
    const toolMessage = mock.requests.at(-1)?.body.messages?.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe(markers.join('\n'));

    const show = await runWispctl(['--socket', daemon.socket, 'sessions', 'show', session.id.slice(0, 8)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('\n  -> tools/media {}\n');
    expect(show.stdout).toContain(`tool (tools/media): ${markers.join(' ')}`);
    expect(show.stdout).not.toContain(mediaName);
    const wide = await runWispctl(['--socket', daemon.socket, 'sessions', 'show', session.id, '-o', 'wide']);
    expect(wide.stdout).toContain(`-> tools/media [${mediaName}] {} (m1)`);
    // A service no longer active keeps its name; its tool is not known now.
    await client.call('services.disable', { id: serviceId });
    const disabled = await runWispctl(['--socket', daemon.socket, 'sessions', 'show', session.id]);
    expect(disabled.stdout).toContain('-> tools/? (a tool of tools, not active now) {}');
    await activate(client, 'tools');
  });

  it('mcp call prints each part of a result in the server\'s order, markers where the media was', async () => {
    const asked = events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'media');
    const call = runWispctl(['--socket', daemon.socket, 'mcp', 'call', 'tools', 'media']);
    const approval = await asked;
    if (approval.type === 'approval.requested') await client.call('approvals.respond', { id: approval.approval.id, decision: 'approve' });
    const run = await call;
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^here is everything\n\[omitted image image\/png, 14 bytes\]\n\[omitted audio audio\/wav, 8 bytes\]\nembedded text\n\[omitted resource application\/octet-stream, 10 bytes\]\n/);
  });
});
