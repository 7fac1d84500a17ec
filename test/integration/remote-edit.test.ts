import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { OAUTH_ITEMS } from '../../src/mcp/index.js';
import { MemorySecretStore } from '../../src/secrets/index.js';
import { startOAuthServer, type OAuthFixture } from '../../fixtures/servers/oauth-server.mjs';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog, registerScenario } from '../helpers/services.js';
import { runWispctl, tempDir } from '../helpers/wispd.js';

/**
 * services.update with a url: a remote service's new URL is a new trust (disabled,
 * configVersion bumped, tool pins reset) and its saved OAuth login, which belongs to the
 * old server, is forgotten. Two OAuth fixture servers play the old and the new server; the
 * in-memory secret store lets the test look at what is kept.
 */
const home = tempDir();
const keychain = new MemorySecretStore();
let oldServer: OAuthFixture;
let newServer: OAuthFixture;
let daemon: InProcessDaemon;
let client: WispClient;
let log: EventLog;

const registryFile = (): string => readFileSync(path.join(home.path, 'mcp-servers.json'), 'utf8');
const pinned = (id: string): boolean => {
  const dir = path.join(home.path, 'tool-pins');
  return readdirSync(dir).some((f) => f.endsWith('.json') && readFileSync(path.join(dir, f), 'utf8').includes(id));
};
const current = async (name: string): Promise<Service> => (await client.call('services.get', { name })).service;

/** Logs in as a browser would: the authorization URL, then its redirect to the loopback callback. */
async function logIn(name: string): Promise<Service> {
  const service = await current(name);
  const announced = log.next((e) => e.type === 'service.login' && e.service.id === service.id);
  const done = client.call('services.login', { id: service.id, configVersion: service.configVersion });
  const event = (await announced) as Extract<WispEvent, { type: 'service.login' }>;
  const authorize = await fetch(event.authorizationUrl, { redirect: 'manual' });
  await fetch(authorize.headers.get('location') ?? '');
  return (await done).service;
}

beforeAll(async () => {
  oldServer = await startOAuthServer();
  newServer = await startOAuthServer();
  daemon = await startInProcess(home.path, { keychain });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  await client.call('services.registerRemote', { name: 'remote', url: oldServer.url, oauth: {} });
  await registerScenario(client, 'local');
});

afterAll(async () => {
  await daemon.stop();
  await oldServer.close();
  await newServer.close();
  home.remove();
});

describe('editing a remote service\'s url', () => {
  it('refuses a bad url with its code and changes nothing stored', async () => {
    const active = await logIn('remote');
    expect(active.connection).toMatchObject({ status: 'active', toolCount: 3 });
    expect(pinned(active.id)).toBe(true);
    const before = registryFile();
    const local = await current('local');
    const refusals: [string, Record<string, unknown>, string][] = [
      ['not http(s)', { id: active.id, set: { url: 'ftp://example.com/mcp' } }, 'INVALID_PARAMS'],
      ['with a space', { id: active.id, set: { url: 'https://example.com/a b' } }, 'INVALID_PARAMS'],
      ['javascript:', { id: active.id, set: { url: 'javascript:alert(1)' } }, 'INVALID_PARAMS'],
      ['for a stdio service', { id: local.id, set: { url: 'https://example.com/mcp' } }, 'INVALID_CONFIG'],
    ];
    for (const [what, params, code] of refusals) {
      const error = await client.call('services.update', params as never).catch((e: unknown) => e);
      expect(error, what).toMatchObject({ code });
    }
    expect(registryFile()).toBe(before);
    const after = await current('remote');
    expect(after).toMatchObject({ url: oldServer.url, configVersion: active.configVersion, connection: { status: 'active' } });
    expect(pinned(active.id)).toBe(true);
    expect(await keychain.get(active.id, OAUTH_ITEMS.tokens)).not.toBeNull();
    expect((await current('local')).configVersion).toBe(local.configVersion);
  });

  it('disables the service, bumps configVersion, resets the pins and forgets the login', async () => {
    const before = await current('remote');
    const stopped = log.next((e) => e.type === 'service.state' && e.service.id === before.id && e.connection.status === 'disabled');
    const { service } = await client.call('services.update', { id: before.id, configVersion: before.configVersion, set: { url: newServer.url } });
    expect(service).toMatchObject({ url: newServer.url, configVersion: before.configVersion + 1, connection: { status: 'disabled' } });
    await stopped;
    expect(JSON.parse(registryFile())).toMatchObject({ services: expect.arrayContaining([expect.objectContaining({ id: before.id, url: newServer.url })]) });
    expect(pinned(before.id)).toBe(false);
    for (const item of [OAUTH_ITEMS.tokens, OAUTH_ITEMS.client]) expect(await keychain.get(before.id, item), item).toBeNull();
    const tokensOfOld = oldServer.seenTokens.length;

    // The new server asks for its own login; no token of the old one is ever sent to it.
    const { service: waiting } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(waiting.connection).toMatchObject({ status: 'needs_auth', authorizationServer: newServer.issuer });
    const active = await logIn('remote');
    expect(active.connection).toMatchObject({ status: 'active', toolCount: 3 });
    expect(newServer.counts).toMatchObject({ registrations: 1, codeExchanges: 1 });
    expect(newServer.seenTokens.filter((t) => oldServer.seenTokens.includes(t))).toEqual([]);
    expect(oldServer.seenTokens).toHaveLength(tokensOfOld);
    expect(pinned(active.id)).toBe(true);
    expect((await client.call('tools.list', { serviceId: active.id })).tools.every((t) => t.pin === 'trusted')).toBe(true);
  });

  it('refuses an edit bound to a configVersion that is no longer current', async () => {
    const service = await current('remote');
    await expect(client.call('services.update', { id: service.id, configVersion: service.configVersion - 1, set: { url: oldServer.url } })).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect(await keychain.get(service.id, OAUTH_ITEMS.tokens)).not.toBeNull();
    expect((await current('remote')).url).toBe(newServer.url);
  });

  it('wispctl mcp edit --url sets it, and a bad one exits with the refusal', async () => {
    const before = await current('remote');
    const edited = await runWispctl(['--socket', daemon.socket, 'mcp', 'edit', 'remote', '--url', oldServer.url]);
    expect(edited).toMatchObject({ code: 0, stdout: expect.stringContaining(`updated remote (disabled, configVersion ${before.configVersion + 1})`) });
    expect(edited.stdout).toContain(oldServer.url);
    expect(await keychain.get(before.id, OAUTH_ITEMS.tokens)).toBeNull();
    const bad = await runWispctl(['--socket', daemon.socket, 'mcp', 'edit', 'remote', '--url', 'file:///etc/passwd']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('must be an http:// or https:// URL without spaces');
    expect((await current('remote')).configVersion).toBe(before.configVersion + 1);
  });

  it('holds a header value back from a new URL until the carry-over is confirmed (wispctl mcp env carry-over)', async () => {
    const service = await current('remote');
    await client.call('services.setHeaders', { id: service.id, mode: 'upsert', headers: [{ name: 'X-Team', value: 'team-value-3301', storage: 'session' }] });
    const { service: moved } = await client.call('services.update', { id: service.id, set: { url: newServer.url } });
    await expect(client.call('services.activate', { id: moved.id, configVersion: moved.configVersion })).rejects.toMatchObject({ code: 'SECRET_BINDING_CHANGED' });
    const carried = await runWispctl(['--socket', daemon.socket, 'mcp', 'env', 'carry-over', 'remote', '--yes']);
    expect(carried.code).toBe(0);
    expect(carried.stderr).toContain(`X-Team will be sent to: ${newServer.url}`);
    expect(carried.stderr).not.toContain('team-value-3301');
    const { service: after } = await client.call('services.activate', { id: moved.id, configVersion: moved.configVersion });
    expect(after.connection).toMatchObject({ status: 'needs_auth' });
  });
});
