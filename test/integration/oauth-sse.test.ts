import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { MemorySecretStore } from '../../src/secrets/index.js';
import { startOAuthServer, type OAuthFixture } from '../../fixtures/servers/oauth-server.mjs';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog } from '../helpers/services.js';
import { browse } from '../helpers/oauth-browse.js';
import { daemonEnv, runWispctl, tempDir, wispctlBin } from '../helpers/wispd.js';

/**
 * OAuth for a server on the legacy HTTP+SSE transport: the SDK's SSE server behind the SDK's
 * authorization server router and bearer check (fixtures/servers/oauth-server.mjs, sse
 * mode), a real daemon in this process with the in-memory secret store, and wispctl. The test
 * plays the browser. The token goes with the event stream's GET and with every POST. Across a
 * daemon restart, a login that is gone (logged out, or the grant revoked at the provider)
 * reads needs_auth naming `wispctl mcp login NAME` when the service is activated.
 */
const home = tempDir();
const keychain = new MemorySecretStore();
let oauth: OAuthFixture;
let daemon: InProcessDaemon;
let client: WispClient;
let log: EventLog;

beforeAll(async () => {
  oauth = await startOAuthServer({ sse: true });
  daemon = await startInProcess(home.path, { keychain });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  client.onEvent((event) => {
    if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
});
afterAll(async () => {
  await daemon.stop();
  await oauth.close();
  home.remove();
});

const wispctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { env: daemonEnv() });
const current = async (name: string): Promise<Service> => (await client.call('services.get', { name })).service;

/** wispctl mcp login NAME --no-browser, with the test as the browser: its exit status and stdout. */
async function loginFromWispctl(name: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, 'mcp', 'login', name, '--no-browser'], { env: daemonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /^\s+(http\S+)$/m.exec(stderr);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    void closed.then(() => reject(new Error(`wispctl mcp login ended without a URL: ${stderr}`)));
  });
  expect((await browse(url)).status).toBe(200);
  return { code: await closed, stdout, stderr };
}

describe('OAuth for a legacy HTTP+SSE server', () => {
  it('add-remote --transport sse --oauth: activating says it needs a login, naming the authorization server', async () => {
    const added = await wispctl('mcp', 'add-remote', 'legacy', oauth.url, '--transport', 'sse', '--oauth');
    expect(added.code).toBe(0);
    const service = await current('legacy');
    expect(service).toMatchObject({ transport: 'sse', oauth: { enabled: true } });
    const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(after.connection).toMatchObject({ status: 'needs_auth', authorizationServer: oauth.issuer });
  });

  it('wispctl mcp login logs in (PKCE, loopback callback) and the service comes up active; calls carry the token', async () => {
    const login = await loginFromWispctl('legacy');
    expect(login.stderr).toContain('Open this URL to log in to legacy');
    expect({ code: login.code, stdout: login.stdout }).toEqual({ code: 0, stdout: 'legacy: logged in; active, 3 tools\n' });
    expect(oauth.counts).toMatchObject({ registrations: 1, codeExchanges: 1 });
    const service = await current('legacy');
    expect((await client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'over sse' } })).text).toBe('over sse');
    const token = oauth.seenTokens.at(-1) ?? '';
    expect(token).not.toBe('');
    expect(daemon.output()).not.toContain(token);
    expect(JSON.stringify(log.events)).not.toContain(token);
  });

  it('renews an expired access token on a 401 without the user, on the same event stream', async () => {
    const service = await current('legacy');
    oauth.expireAccessTokens();
    expect((await client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'after expiry' } })).text).toBe('after expiry');
    expect(oauth.counts.refreshes).toBe(1);
    expect(oauth.counts.authorizations).toBe(1);
  });

  it('logout: stopped, and a call after it says the service needs a login', async () => {
    const service = await current('legacy');
    const out = await wispctl('mcp', 'logout', 'legacy');
    expect(out.code).toBe(0);
    const { service: loggedOut } = await client.call('services.get', { id: service.id });
    expect(loggedOut.connection).toMatchObject({ status: 'needs_auth', message: expect.stringContaining('wispctl mcp login legacy') });
    await expect(client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'after logout' } })).rejects.toMatchObject({ code: 'NEEDS_AUTH' });
    const states = log.events.filter((e): e is Extract<WispEvent, { type: 'service.state' }> => e.type === 'service.state' && e.service.id === service.id);
    expect(states.at(-1)?.connection.status).toBe('needs_auth');
  });

  /** The daemon stopped and started again on the same data dir and secret store (what a reboot keeps). */
  async function restart(): Promise<void> {
    await daemon.stop();
    daemon = await startInProcess(home.path, { keychain });
    client = await daemon.connect();
    log = await EventLog.follow(client);
  }

  it('after a restart with the login gone (logged out before), activating says it needs a login', async () => {
    await restart();
    const service = await current('legacy');
    expect(service.connection.status).toBe('disabled');
    const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(after.connection).toMatchObject({ status: 'needs_auth', authorizationServer: oauth.issuer, message: expect.stringContaining('wispctl mcp login legacy') });
  });

  it('after a restart with the grant revoked at the provider (tokens still saved), activating says it needs a login, not a failure', async () => {
    expect((await loginFromWispctl('legacy')).code).toBe(0);
    await restart();
    oauth.revokeAll();
    const service = await current('legacy');
    const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(after.connection).toMatchObject({ status: 'needs_auth', message: expect.stringContaining('wispctl mcp login legacy') });
    await expect(client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject({ code: 'NEEDS_AUTH' });
  });

  it('the same for a streamable HTTP service: the grant revoked across a restart reads needs_auth naming the login', async () => {
    const modern = await startOAuthServer();
    try {
      await client.call('services.registerRemote', { name: 'modern', url: modern.url, oauth: {} });
      expect((await loginFromWispctl('modern')).code).toBe(0);
      await restart();
      modern.revokeAll();
      const service = await current('modern');
      const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
      expect(after.connection).toMatchObject({ status: 'needs_auth', message: expect.stringContaining('wispctl mcp login modern') });
    } finally {
      await modern.close();
    }
  });
});
