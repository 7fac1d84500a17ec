import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Task, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { EventLog } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Elicitations caused by a model session's tool calls: asked inline in `wispctl chat` (a real
 * terminal), and never part of what the model reads or can do. A real daemon, the mock model,
 * and the stdio fixture that asks from inside its tools.
 */
const mock = new MockDeepSeek();
const home = tempDir();
const elicitServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs');
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
const modelName: Record<string, string> = {};

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-elicit' }) });
  client = await daemon.connect();
  // Subscribed: a request of the server is put before this client (else it is answered cancel).
  log = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
  const { service } = await client.call('services.register', { name: 'asker', command: process.execPath, args: [elicitServer], timeoutMs: 120_000 });
  await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
  for (const tool of (await client.call('tools.list')).tools) modelName[tool.name] = tool.modelName;
});
beforeEach(() => mock.clear());
afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

function chatTerminal(): Terminal {
  return new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'chat'], { PATH: process.env.PATH ?? '' });
}

function taskEnd(taskId: string): Promise<Task> {
  return log
    .waitFor((e) => e.type === 'task.state' && e.task.id === taskId && !['running', 'awaiting_approval'].includes(e.task.state.status))
    .then((e) => (e as Extract<WispEvent, { type: 'task.state' }>).task);
}

describe('an elicitation caused by a model session', () => {
  it('nothing of it reaches the model: not the server\'s text, not the answer; the model is offered no way to answer one', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'q1', name: modelName.ask_quiet ?? '', arguments: '{}' }]) }, { events: textEvents('Thanks, the server has it.') });
    const { session } = await client.call('sessions.create', { title: 'quiet' });
    const approval = log.next((e) => e.type === 'approval.requested');
    const asked = log.next((e) => e.type === 'elicitation.requested');
    const { task } = await client.call('sessions.send', { id: session.id, text: 'Use ask_quiet please.' });
    await client.call('approvals.respond', { id: ((await approval) as Extract<WispEvent, { type: 'approval.requested' }>).approval.id, decision: 'approve' });
    const { elicitation } = (await asked) as Extract<WispEvent, { type: 'elicitation.requested' }>;
    expect(elicitation).toMatchObject({ message: 'Type the code word QUIET-MESSAGE-5e1f', owners: [{ sessionId: session.id, taskId: task.id }] });
    await client.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { word: 'ANSWER-CANARY-91bc' } });
    expect(await taskEnd(task.id)).toMatchObject({ state: { status: 'completed' } });

    const sent = JSON.stringify(mock.requests.map((r) => r.body));
    // The tool's own result did go back to the model (so the requests are the right ones)...
    expect(sent).toContain('noted (accept)');
    // ...but neither the server's question nor the human's answer.
    expect(sent).not.toContain('QUIET-MESSAGE-5e1f');
    expect(sent).not.toContain('ANSWER-CANARY-91bc');
    // No tool the model is offered answers (or lists) elicitations.
    const offered = mock.requests.flatMap((r) => r.body.tools ?? []).map((t) => `${t.function.name} ${t.function.description}`);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.filter((t) => /elicit|respond/i.test(t))).toEqual([]);
    // Nor does the session's record of the conversation hold either.
    const record = JSON.stringify(await client.call('sessions.get', { id: session.id }));
    expect(record).not.toContain('QUIET-MESSAGE-5e1f');
    expect(record).not.toContain('ANSWER-CANARY-91bc');
  });
});

describe.skipIf(!Terminal.available())('wispctl chat asks a server\'s request for input inline', () => {
  it('form mode: the server\'s text shown as its own, each field asked by the schema; the server gets the content', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'f1', name: modelName.ask_form ?? '', arguments: '{}' }]) }, { events: textEvents('The form is in.') });
    const terminal = chatTerminal();
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('Ask me who I am.\r');
      await terminal.waitFor(/Run ask_form \(service asker\)\? \[y\/N\] *$/m);
      terminal.type('y\r');
      const shown = await terminal.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      expect(shown).toMatch(/asker asks for input \(elicitation [0-9a-f-]+\)\.\n\s+The server says \(untrusted text, not from wispctl\):\n\s+\| Who are you\?\n\s+\| Really\./);
      expect(shown).toMatch(/name: string, required — Your name/);
      terminal.type('y\r');
      await terminal.waitFor(/name \(string, required\): *$/m);
      terminal.type('Ada\r');
      await terminal.waitFor(/age \(integer, optional, Enter skips\): *$/m);
      terminal.type('old\r');
      await terminal.waitFor(/age: must be a number, not "old": try again\n\s+age \(integer, optional, Enter skips\): *$/m);
      terminal.type('41\r');
      await terminal.waitFor(/plan \(string, optional, Enter skips\): *$/m);
      terminal.type('\r');
      const done = await terminal.waitFor(/The form is in\.\n[\s\S]*you>\s*$/m);
      expect(done).toMatch(/elicitation [0-9a-f-]+ accepted by client-\d+/);
      // What the server answered the call with (its result carries what it got): the defaults filled in.
      const toolMessage = mock.requests.at(-1)?.body.messages?.at(-1);
      expect(toolMessage).toMatchObject({ role: 'tool', content: '{"action":"accept","content":{"name":"Ada","age":41,"plan":"free"}}' });
      terminal.type('/quit\r');
      expect([0, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  }, 60_000);

  it('URL mode: the full URL and its host, never opened; no declines; Ctrl-C at a form cancels it and the request', async () => {
    mock.enqueue(
      { events: toolCallEvents([{ id: 'u1', name: modelName.ask_url ?? '', arguments: '{}' }]) },
      { events: textEvents('You declined.') },
      { events: toolCallEvents([{ id: 'f2', name: modelName.ask_form ?? '', arguments: '{}' }]) },
    );
    const terminal = chatTerminal();
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('Get my consent.\r');
      await terminal.waitFor(/Run ask_url \(service asker\)\? \[y\/N\] *$/m);
      terminal.type('y\r');
      const shown = await terminal.waitFor(/Did you complete it at consent\.example\.com\? \(no declines\) \[y\/N\] *$/m);
      expect(shown).toContain('https://consent.example.com/sign?id=42');
      expect(shown).toMatch(/host: consent\.example\.com/);
      expect(shown).toContain('wispctl never opens it');
      // The server's escape sequences are shown as text, labelled as its own, never passed to the terminal.
      expect(shown).toMatch(/The server says \(untrusted text, not from wispctl\):\n\s+\| Please sign the \\x1b\[31mterms\\x1b\[0m/);
      terminal.type('n\r');
      await terminal.waitFor(/You declined\.\n[\s\S]*you>\s*$/m);
      expect(mock.requests.at(-1)?.body.messages?.at(-1)).toMatchObject({ role: 'tool', content: '{"action":"decline","content":null}' });

      const resolved = log.next((e) => e.type === 'elicitation.resolved');
      const cancelled = log.next((e) => e.type === 'task.state' && e.task.state.status === 'cancelled');
      terminal.type('Ask again.\r');
      await terminal.waitFor(/Run ask_form \(service asker\)\? \[y\/N\] *$/m);
      terminal.type('y\r');
      await terminal.waitFor(/Fill in the form\? \(no declines\) \[y\/N\] *$/m);
      terminal.press('C-c');
      await terminal.waitFor(/cancelled\n[\s\S]*you>\s*$/m);
      expect(await resolved).toMatchObject({ elicitation: { status: 'cancelled', by: expect.stringMatching(/^client-\d+$/) } });
      await cancelled;
      terminal.type('/quit\r');
      expect([0, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  }, 60_000);
});
