import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, registerScenario } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let echoName: string;

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-terminal' }) });
  client = await daemon.connect();
  await client.call('model.setSettings', { baseUrl: url });
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

describe.skipIf(!Terminal.available())('wispctl in a real terminal', () => {
  it('chat: a question, an approval answered inline, the answer on screen', async () => {
    mock.enqueue(
      { events: toolCallEvents([{ id: 'c1', name: echoName, arguments: '{"text":"hello from the tool"}' }]) },
      { events: textEvents('The echo tool answered: hello from the tool.') },
    );
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'chat'], { PATH: process.env.PATH ?? '' });
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('Please use the echo tool.');
      terminal.press('Enter');
      const asked = await terminal.waitFor(/Run echo \(service tools\)\? \[y\/N\]/);
      expect(asked).toContain('tool call: tools/echo {"text":"hello from the tool"}');
      terminal.type('y');
      terminal.press('Enter');
      const answered = await terminal.waitFor(/The echo tool answered: hello from the tool\.\n[\s\S]*you>\s*$/m);
      expect(answered).toContain('(tools/echo ran in');
      terminal.type('/quit');
      terminal.press('Enter');
      expect([0, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  });

  it('chat: Ctrl-C cancels the running request, /tools and /sessions answer, Ctrl-D leaves', async () => {
    mock.enqueue({ events: [...textEvents('a long answer that never ends').slice(0, 2), { stall: true }] });
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'chat'], { PATH: process.env.PATH ?? '' });
    try {
      await terminal.waitFor(/you>\s*$/m);
      terminal.type('/tools');
      terminal.press('Enter');
      await terminal.waitFor(new RegExp(`tools/echo\\s+${echoName}`));
      terminal.type('tell me a long story');
      terminal.press('Enter');
      // The answer's own line, not the request typed above (which says "a long" too).
      await terminal.waitFor(/^a long ans/m);
      terminal.press('C-c');
      await terminal.waitFor(/cancelled: cancelled by a client\n[\s\S]*you>\s*$/m);
      // Ctrl-C in the same keystrokes as Enter: before the daemon has started the task, or just
      // after; either way the request is cancelled, never lost (the model's stall would hang it).
      mock.enqueue({ events: [...textEvents('another answer that never ends').slice(0, 2), { stall: true }] });
      terminal.type('and another one');
      terminal.press('Enter', 'C-c');
      const screen = await terminal.waitFor(/cancelled: cancelled by a client\n[\s\S]*cancelled: cancelled by a client\n[\s\S]*you>\s*$/m);
      const { tasks } = await client.call('sessions.get', { id: /^session ([0-9a-f-]{36})\./m.exec(screen)?.[1] ?? '(no session on screen)' });
      expect(tasks.map((t) => t.state.status)).toEqual(['cancelled', 'cancelled']);
      terminal.type('/sessions');
      terminal.press('Enter');
      await terminal.waitFor(/\(this one\)/);
      terminal.press('C-d');
      expect([0, null]).toContain(await terminal.exited());
    } finally {
      terminal.close();
    }
  });

  it('env set reads the value without echoing it', async () => {
    const terminal = new Terminal([process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'env', 'set', 'tools', 'HIDDEN_TOKEN', '--session'], { PATH: process.env.PATH ?? '' });
    try {
      await terminal.waitFor(/value for HIDDEN_TOKEN \(tools, not shown\):\s*$/m);
      terminal.type('typed-secret-value');
      terminal.press('Enter');
      const screen = await terminal.waitFor(/HIDDEN_TOKEN saved \(session only\)/);
      expect(screen).not.toContain('typed-secret-value');
      expect((await client.call('services.get', { name: 'tools' })).service.env).toEqual([{ name: 'HIDDEN_TOKEN', storage: 'session' }]);
    } finally {
      terminal.close();
    }
  });
});
