import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockDeepSeek, textEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Where the model key comes from, as wispctl shows it across daemon restarts (issue 18,
 * bug 2): a session key dies with its daemon, the daemon's DEEPSEEK_API_KEY applies when no
 * saved key does, and clear-key removes a saved key. No keychain here (no D-Bus session).
 */
const home = tempDir();
const dataDir = path.join(home.path, 'data');
const mock = new MockDeepSeek();
let url: string;

const ctl = (daemon: RunningDaemon, input: string, ...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { input });
const keyShown = async (daemon: RunningDaemon): Promise<string> => /^key\s+(\S+)$/m.exec((await ctl(daemon, '', 'model', 'show')).stdout)?.[1] ?? 'missing';

async function restart(daemon: RunningDaemon | undefined, env: NodeJS.ProcessEnv): Promise<RunningDaemon> {
  if (daemon !== undefined) {
    expect((await ctl(daemon, '', 'daemon', 'stop')).code).toBe(0);
    await daemon.exited;
  }
  return startWispd(dataDir, { env: daemonEnv(env) });
}

beforeAll(async () => {
  url = await mock.start();
});

afterAll(async () => {
  killLeftovers();
  await mock.stop();
  home.remove();
});

describe('wispctl model show, set-key and clear-key across restarts', () => {
  it('after a restart a session key is gone: model show says none, or environment when the daemon has DEEPSEEK_API_KEY, and that key is used', async () => {
    let daemon = await restart(undefined, {});
    expect((await ctl(daemon, '', 'model', 'set', '--base-url', url, '--max-retries', '0')).code).toBe(0);
    const set = await ctl(daemon, 'sk-session-only\n', 'model', 'set-key', '--session');
    expect(set).toMatchObject({ code: 0, stdout: 'API key saved (session)\n' });
    expect(await keyShown(daemon)).toBe('session');

    daemon = await restart(daemon, {});
    expect(await keyShown(daemon)).toBe('none');
    const noKey = await ctl(daemon, '', 'send', 'hello');
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toContain('(MODEL_NO_KEY)');

    daemon = await restart(daemon, { DEEPSEEK_API_KEY: 'sk-from-the-environment' });
    expect(await keyShown(daemon)).toBe('environment');
    mock.enqueue({ events: textEvents('hi there') });
    const sent = await ctl(daemon, '', 'send', 'hello');
    expect(sent.code).toBe(0);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-the-environment');
    await ctl(daemon, '', 'daemon', 'stop');
    await daemon.exited;
  });

  it('a session key beats the environment; clear-key removes it and the environment applies again; an empty set-key names clear-key', async () => {
    const daemon = await restart(undefined, { DEEPSEEK_API_KEY: 'sk-from-the-environment' });
    await ctl(daemon, 'sk-this-run\n', 'model', 'set-key', '--session');
    expect(await keyShown(daemon)).toBe('session');
    mock.enqueue({ events: textEvents('one') });
    expect((await ctl(daemon, '', 'send', 'hello')).code).toBe(0);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-this-run');

    const cleared = await ctl(daemon, '', 'model', 'clear-key');
    expect(cleared).toMatchObject({ code: 0, stdout: 'API key removed; the daemon\'s DEEPSEEK_API_KEY applies\n' });
    expect(await keyShown(daemon)).toBe('environment');
    mock.enqueue({ events: textEvents('two') });
    expect((await ctl(daemon, '', 'send', 'hello')).code).toBe(0);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-the-environment');

    const empty = await ctl(daemon, '\n', 'model', 'set-key', '--session');
    expect(empty).toMatchObject({ code: 2, stderr: 'wispctl: the key is empty: nothing was sent (to remove the key: wispctl model clear-key) (INVALID_PARAMS)\n' });
    const help = await ctl(daemon, '', 'model', '--help');
    expect(help.stdout).toMatch(/clear-key\s+remove the saved API key/);
    await ctl(daemon, '', 'daemon', 'stop');
    await daemon.exited;
  });
});
