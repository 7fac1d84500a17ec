import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * KEYCHAIN_UNAVAILABLE as each wispctl command reports it (issue 18, bug 5): the daemon
 * runs with no D-Bus session, so the real keychain store fails; each command names its own
 * way to keep the value for this daemon run only.
 */
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;

const ctl = (input: string, ...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { input });

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
  await registerScenario(client, 'files');
  await client.call('services.registerRemote', { name: 'remote', url: 'http://127.0.0.1:9/mcp' });
});

afterAll(async () => {
  await client.close();
  killLeftovers();
  home.remove();
});

describe('KEYCHAIN_UNAVAILABLE from wispctl', () => {
  it('the daemon says whether the keychain answers, writing nothing', async () => {
    expect(await client.call('services.checkKeychain')).toEqual({ available: false, reason: 'no D-Bus session bus' });
  });

  it('mcp env set asks the daemon before it asks for the value, and names its own --session form', async () => {
    // stdin stays open: a command that read the value first would wait for it forever.
    const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, 'mcp', 'env', 'set', 'files', 'API_KEY'], { stdio: ['pipe', 'pipe', 'pipe'], env: daemonEnv() });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    child.stdin.destroy();
    expect(code).toBe(7);
    expect(stderr).toBe(
      'wispctl: the OS keychain is unavailable (no D-Bus session bus), so nothing was asked and nothing written. Unlock or start it, or keep the value for this daemon run only: wispctl mcp env set files API_KEY --session (KEYCHAIN_UNAVAILABLE)\n',
    );
  });

  it('mcp header set, model set-key and mcp import each name their own, never mcp env set', async () => {
    const header = await ctl('Bearer x\n', 'mcp', 'header', 'set', 'remote', 'Authorization');
    expect(header.code).toBe(7);
    expect(header.stderr).toContain('so nothing was asked and nothing written');
    expect(header.stderr).toContain('for this daemon run only: wispctl mcp header set remote Authorization --session (KEYCHAIN_UNAVAILABLE)');

    const key = await ctl('sk-test\n', 'model', 'set-key');
    expect(key.code).toBe(7);
    expect(key.stderr).toContain('for this daemon run only: wispctl model set-key --session (KEYCHAIN_UNAVAILABLE)');

    // An import reads its values from the file: the daemon finds the keychain gone when it writes them.
    const file = path.join(home.path, 'my servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { imported: { command: process.execPath, args: ['x.js'], env: { TOKEN: 'abc' } } } }));
    const imported = await ctl('', 'mcp', 'import', file);
    expect(imported.code).toBe(7);
    expect(imported.stderr).toContain(`For this daemon run only: wispctl mcp import '${file}' --session (KEYCHAIN_UNAVAILABLE)`);

    for (const result of [header, key, imported]) expect(result.stderr).not.toContain('mcp env set');
  });

  it('mcp env set and mcp header set refuse an empty value and send nothing', async () => {
    const before = (await client.call('services.get', { name: 'files' })).service.configVersion;
    const env = await ctl('\n', 'mcp', 'env', 'set', 'files', 'API_KEY', '--session');
    expect(env).toMatchObject({ code: 2, stdout: '', stderr: 'wispctl: the value of API_KEY is empty: nothing was sent (INVALID_PARAMS)\n' });
    const header = await ctl('', 'mcp', 'header', 'set', 'remote', 'Authorization', '--session');
    expect(header).toMatchObject({ code: 2, stderr: 'wispctl: the value of Authorization is empty: nothing was sent (INVALID_PARAMS)\n' });
    const after = (await client.call('services.get', { name: 'files' })).service;
    expect(after.configVersion).toBe(before);
    expect(after.env).toEqual([]);
  });
});
