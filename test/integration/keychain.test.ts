import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeychainSecretStore } from '../../src/secrets/index.js';
import { MockDeepSeek, textEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, EventLog, pidOf, registerScenario } from '../helpers/services.js';
import { daemonEnv, environOf, killLeftovers, runWispctl, startWispd, tempDir } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

/**
 * Against a real Secret Service. `npm test` provides one (gnome-keyring in a private D-Bus
 * session, see scripts/test.sh) and sets WISP_TEST_KEYRING=1; without it these are skipped,
 * and .ci/run makes sure CI always has it.
 */
const available = needs(process.env.WISP_TEST_KEYRING === '1', 'no Secret Service (npm test starts one where gnome-keyring and dbus-daemon are installed): the OS keychain tests');
const env = daemonEnv({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '' });
const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

describe.skipIf(!available)('the OS keychain (a real Secret Service)', () => {
  const store = new KeychainSecretStore();
  beforeAll(() => {
    expect(process.env.DBUS_SESSION_BUS_ADDRESS).toBeTruthy();
  });

  it('stores, reads and deletes one entry per service and variable', async () => {
    await store.set('svc-1', 'TOKEN', { value: 'v1', binding: 'b1' });
    await store.set('svc-2', 'TOKEN', { value: 'v2', binding: 'b2' });
    expect(await store.get('svc-1', 'TOKEN')).toEqual({ value: 'v1', binding: 'b1' });
    expect(await store.get('svc-2', 'TOKEN')).toEqual({ value: 'v2', binding: 'b2' });
    await store.delete('svc-1', 'TOKEN');
    expect(await store.get('svc-1', 'TOKEN')).toBeNull();
    await store.delete('svc-2', 'TOKEN');
  });

  it('keeps a service\'s keychain variables across daemon restarts, and removes them with the service', async () => {
    const first = await startWispd(home.path, { args: ['--stop-grace-ms', '100'], env });
    const c1 = await first.connect();
    const service = await registerScenario(c1, 'keyed');
    await c1.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'API_KEY', value: 'kept-in-the-keyring', storage: 'keychain' }] });
    expect(await store.get(service.id, 'API_KEY')).toMatchObject({ value: 'kept-in-the-keyring' });
    await c1.call('daemon.shutdown');
    await first.exited;

    const second = await startWispd(home.path, { args: ['--stop-grace-ms', '100'], env });
    const c2 = await second.connect();
    const active = await activate(c2, 'keyed');
    expect(active.connection.status).toBe('active');
    // The value reached the program (a Secret Service, and so this suite, runs on Linux: /proc is there).
    expect(environOf(pidOf(active))).toContain('API_KEY=kept-in-the-keyring');
    await c2.call('services.delete', { id: service.id });
    expect(await store.get(service.id, 'API_KEY')).toBeNull();
    await c2.call('daemon.shutdown');
    await second.exited;
  });

  it('keeps the model API key in the keychain across restarts, and uses it', async () => {
    const mock = new MockDeepSeek();
    const url = await mock.start();
    const dir = tempDir();
    try {
      const noKeyEnv = daemonEnv({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '' });
      const first = await startWispd(dir.path, { env: noKeyEnv });
      const c1 = await first.connect();
      await c1.call('model.setSettings', { baseUrl: url });
      expect((await c1.call('model.setKey', { value: 'sk-from-the-keyring', storage: 'keychain' })).settings.key).toBe('keychain');
      await c1.call('daemon.shutdown');
      await first.exited;

      const second = await startWispd(dir.path, { env: noKeyEnv });
      const c2 = await second.connect();
      const log = await EventLog.follow(c2);
      mock.enqueue({ events: textEvents('hi') });
      const { session } = await c2.call('sessions.create', {});
      const { task } = await c2.call('sessions.send', { id: session.id, text: 'hello' });
      await log.waitFor((e) => e.type === 'task.state' && e.task.id === task.id && e.task.state.status === 'completed');
      expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-the-keyring');
      await c2.call('model.setKey', { value: '', storage: 'keychain' });
      expect((await c2.call('model.getSettings')).settings.key).toBe('none');
      await c2.call('daemon.shutdown');
      await second.exited;
    } finally {
      await mock.stop();
      dir.remove();
    }
  });
  it('says the keychain answers; a keychain key beats DEEPSEEK_API_KEY, a session key beats both, and clear-key removes both', async () => {
    const dir = tempDir();
    try {
      const daemon = await startWispd(dir.path, { env: daemonEnv({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '', DEEPSEEK_API_KEY: 'sk-env' }) });
      const ctl = (input: string, ...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { input });
      const client = await daemon.connect();
      expect(await client.call('services.checkKeychain')).toEqual({ available: true, reason: null });
      expect((await client.call('model.getSettings')).settings.key).toBe('environment');
      expect((await ctl('sk-kept\n', 'model', 'set-key')).stdout).toBe('API key saved (keychain)\n');
      expect((await client.call('model.getSettings')).settings.key).toBe('keychain');
      expect((await ctl('sk-run\n', 'model', 'set-key', '--session')).stdout).toBe('API key saved (session)\n');
      expect((await client.call('model.getSettings')).settings.key).toBe('session');
      expect(await ctl('', 'model', 'clear-key')).toMatchObject({ code: 0, stdout: 'API key removed; the daemon\'s DEEPSEEK_API_KEY applies\n' });
      expect(await store.get('model', 'DEEPSEEK_API_KEY')).toBeNull();
      await client.call('daemon.shutdown');
      await daemon.exited;
    } finally {
      dir.remove();
    }
  });
});
