import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, ApprovalOutcome, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 13 (and issue 18, bug 1): Ctrl-C at any wispctl prompt ends the same way: one line,
 * `cancelled`, on stderr, the approval being asked about cancelled or denied at the daemon,
 * exit status 130, and no stack trace. In the chat, Ctrl-C at an approval question cancels
 * that request and the chat prompt comes back. Each command runs in a real terminal (tmux)
 * under a shell that prints its exit status, so the status is read from the screen.
 */

const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let events: EventLog;
let echoName: string;

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-interrupt' }) });
  client = await daemon.connect();
  events = await EventLog.follow(client);
  await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
  await registerScenario(client, 'tools');
  await activate(client, 'tools');
  echoName = (await client.call('tools.list')).tools.find((t) => t.name === 'echo')?.modelName ?? '';
});
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

/**
 * wispctl in a terminal, under a shell that prints `[exit N]` when it ends (the shell's own
 * INT trap keeps it alive when the terminal's Ctrl-C reaches the whole foreground group).
 */
function wispctl(...args: string[]): Terminal {
  const script = 'trap : INT; "$@"; echo "[exit $?]"';
  return new Terminal(['/bin/sh', '-c', script, 'sh', process.execPath, wispctlBin, '--socket', daemon.socket, ...args], { PATH: process.env.PATH ?? '' });
}

/** What a cancelled prompt leaves: `cancelled` on a line of its own, exit 130, no stack trace. */
async function expectCancelled(terminal: Terminal): Promise<string> {
  const screen = await terminal.waitFor(/\[exit \d+\]/);
  expect(screen).toMatch(/^cancelled\n(.*\n)*\[exit 130\]/m);
  expect(screen).not.toMatch(/AbortError|WispError|\n\s+at /);
  return screen;
}

/** The next approval asked for the echo tool, and the event that resolves it. */
function nextEchoApproval(): { requested: Promise<Approval>; resolved: Promise<ApprovalOutcome> } {
  const requested = events
    .next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'echo')
    .then((e) => (e as Extract<WispEvent, { type: 'approval.requested' }>).approval);
  const resolved = requested.then((approval) =>
    events.waitFor((e) => e.type === 'approval.resolved' && e.approval.id === approval.id).then((e) => (e as Extract<WispEvent, { type: 'approval.resolved' }>).approval),
  );
  return { requested, resolved };
}

describe.skipIf(!Terminal.available())('Ctrl-C at a wispctl prompt', () => {
  it('mcp call: the approval is denied, one line says cancelled, exit 130', async () => {
    const approval = nextEchoApproval();
    const terminal = wispctl('mcp', 'call', 'tools', 'echo', '{"text":"never"}');
    try {
      await terminal.waitFor(/Run echo \(service tools\)\? \[y\/N\]\s*$/m);
      terminal.press('C-c');
      await expectCancelled(terminal);
      expect((await approval.resolved).state.status).toBe('denied');
      expect((await client.call('approvals.list')).approvals.filter((a) => a.summary.toolName === 'echo')).toEqual([]);
    } finally {
      terminal.close();
    }
  });

  it('mcp activate: nothing is activated', async () => {
    await registerScenario(client, 'idle');
    const terminal = wispctl('mcp', 'activate', 'idle');
    try {
      await terminal.waitFor(/Trust and start .* \(service idle\)\? \[y\/N\]\s*$/m);
      terminal.press('C-c');
      await expectCancelled(terminal);
      expect((await client.call('services.get', { name: 'idle' })).service.connection.status).toBe('disabled');
    } finally {
      terminal.close();
    }
  });

  it('mcp env set: at the secret prompt, nothing is saved', async () => {
    const terminal = wispctl('mcp', 'env', 'set', 'idle', 'NEVER_SET', '--session');
    try {
      await terminal.waitFor(/value for NEVER_SET \(idle, not shown\):\s*$/m);
      terminal.type('half-typed');
      terminal.press('C-c');
      const screen = await expectCancelled(terminal);
      expect(screen).not.toContain('half-typed');
      expect((await client.call('services.get', { name: 'idle' })).service.env).toEqual([]);
    } finally {
      terminal.close();
    }
  });

  it('send: the task and its approval are cancelled', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 's1', name: echoName, arguments: '{"text":"from send"}' }]) });
    const approval = nextEchoApproval();
    const terminal = wispctl('send', 'use the echo tool');
    try {
      await terminal.waitFor(/Run echo \(service tools\)\? \[y\/N\]\s*$/m);
      terminal.press('C-c');
      await expectCancelled(terminal);
      const resolved = await approval.resolved;
      expect(resolved.state.status).toBe('cancelled');
      const { tasks } = await client.call('sessions.get', { id: resolved.requester.sessionId ?? '' });
      expect(tasks.at(-1)?.state.status).toBe('cancelled');
    } finally {
      terminal.close();
    }
  });

});

describe.skipIf(!Terminal.available())('Ctrl-C in wispctl chat and events --follow', () => {
  it('chat: Ctrl-C at the approval cancels that request and the chat prompt comes back; /quit still works', async () => {
    mock.enqueue(
      { events: toolCallEvents([{ id: 'c1', name: echoName, arguments: '{"text":"from chat"}' }]) },
      { events: textEvents('A second request answered.') },
    );
    const approval = nextEchoApproval();
    const terminal = wispctl('chat');
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('use the echo tool');
      terminal.press('Enter');
      await terminal.waitFor(/Run echo \(service tools\)\? \[y\/N\]\s*$/m);
      terminal.press('C-c');
      const screen = await terminal.waitFor(/^cancelled\nyou>\s*$/m);
      expect(screen).not.toMatch(/AbortError|WispError|withdrawn|\n\s+at /);
      expect((await approval.resolved).state.status).toBe('cancelled');
      terminal.type('and now something else');
      terminal.press('Enter');
      await terminal.waitFor(/A second request answered\.\nyou>\s*$/m);
      terminal.type('/quit');
      terminal.press('Enter');
      const end = await terminal.waitFor(/\[exit \d+\]/);
      expect(end).toContain('[exit 0]');
      expect(end.match(/Run echo/g)).toHaveLength(1);
    } finally {
      terminal.close();
    }
  });

  it('chat: Ctrl-C at its own prompt ends it like any cancelled prompt', async () => {
    const terminal = wispctl('chat');
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.press('C-c');
      await expectCancelled(terminal);
    } finally {
      terminal.close();
    }
  });

  it('events --follow: Ctrl-C ends it with exit 130', async () => {
    const terminal = wispctl('events', '--follow');
    try {
      await terminal.waitFor(/service\.registered\s+idle/);
      terminal.press('C-c');
      const screen = await terminal.waitFor(/\[exit \d+\]/);
      expect(screen).toContain('[exit 130]');
    } finally {
      terminal.close();
    }
  });
});

describe.skipIf(!Terminal.available())('Ctrl-C at the install question', () => {
  let registry: LocalRegistry;

  beforeAll(async () => {
    const npm12Bin = await ensureNpm12();
    registry = await LocalRegistry.start();
    await registry.publish({ name: 'tiny-mcp', version: '1.0.0', bin: { 'tiny-mcp': 'cli.js' } });
    await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 120_000 });
  }, NPM12_SETUP_MS);
  afterAll(async () => {
    await registry.close();
  });

  it('install: the plan\'s approval is denied and nothing is installed', async () => {
    const resolved = events
      .next((e) => e.type === 'approval.requested' && e.approval.kind === 'install')
      .then((requested) => events.waitFor((e) => e.type === 'approval.resolved' && 'approval' in requested && e.approval.id === requested.approval.id));
    const terminal = wispctl('install', 'tiny-mcp@1.0.0', '--bin', 'tiny-mcp');
    try {
      await terminal.waitFor(/Install tiny-mcp@1\.0\.0\? \[y\/N\]\s*$/m, 60_000);
      terminal.press('C-c');
      await expectCancelled(terminal);
      const event = await resolved;
      expect(event.type === 'approval.resolved' ? event.approval.state.status : event.type).toBe('denied');
      expect((await client.call('services.list')).services.map((s) => s.name)).not.toContain('tiny-mcp');
    } finally {
      terminal.close();
    }
  });
});
