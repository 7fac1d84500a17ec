import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { MemorySecretStore } from '../../src/secrets/index.js';
import { browseLogin, startOidcServer, type OidcFixture } from '../../fixtures/servers/oidc-server.mjs';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog } from '../helpers/services.js';
import { daemonEnv, tempDir, wispctlBin } from '../helpers/wispd.js';

/**
 * OAuth against a real OpenID provider (node-oidc-provider, stock settings: refresh tokens
 * rotated at every use, a reused one revokes the grant; resource indicators; dynamic
 * registration; its own login and consent pages, driven by a cookie-keeping script).
 */
type LoginEvent = Extract<WispEvent, { type: 'service.login' }>;

let home: ReturnType<typeof tempDir>;
let op: OidcFixture;
let daemon: InProcessDaemon;
let client: WispClient;
let log: EventLog;
const keychain = new MemorySecretStore();

async function current(name: string): Promise<Service> {
  return (await client.call('services.get', { name })).service;
}

/** Starts a login and waits for the authorization URL it announces. */
async function startLogin(name: string): Promise<{ event: LoginEvent; done: Promise<{ service: Service }> }> {
  const service = await current(name);
  const announced = log.next((e) => e.type === 'service.login' && e.service.id === service.id);
  const done = client.call('services.login', { id: service.id, configVersion: service.configVersion });
  done.catch(() => undefined);
  return { event: (await announced) as LoginEvent, done };
}

function echo(serviceId: string, text: string): Promise<{ text: string }> {
  return client.call('tools.call', { serviceId, toolName: 'echo', arguments: { text } });
}

function wispctl(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, ...args], { env: daemonEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  home = tempDir();
  op = await startOidcServer();
  daemon = await startInProcess(home.path, { keychain });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  client.onEvent((event) => {
    if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
});
afterAll(async () => {
  await client.close();
  await daemon.stop();
  await op.close();
  home.remove();
});

describe('OAuth against node-oidc-provider (stock settings)', () => {
  it('logs in through the provider\'s own login and consent pages, asking for offline_access without being told', async () => {
    await client.call('services.registerRemote', { name: 'op', url: op.url, oauth: {} });
    const { event, done } = await startLogin('op');
    const authorization = new URL(event.authorizationUrl);
    expect(authorization.origin).toBe(op.issuer);
    expect(authorization.searchParams.get('scope')?.split(' ').sort()).toEqual(['mcp:tools', 'offline_access']);
    expect(authorization.searchParams.get('resource')).toBe(op.url);
    const page = await browseLogin(event.authorizationUrl);
    expect(page.callbackUrl.searchParams.get('iss')).toBe(op.issuer);
    expect(page).toMatchObject({ status: 200, text: expect.stringContaining('Logged in') });
    const { service } = await done;
    expect(service.connection).toMatchObject({ status: 'active', toolCount: 3 });
    expect(op.counts).toMatchObject({ registrations: 1, codeExchanges: 1 });
    expect((await echo(service.id, 'hello')).text).toBe('hello');
  });

  it('survives two calls at once across an expiry: one refresh, the grant kept', async () => {
    const service = await current('op');
    for (let round = 1; round <= 2; round++) {
      await op.expireAccessTokens();
      const answers = await Promise.all([echo(service.id, `a${round}`), echo(service.id, `b${round}`)]);
      expect(answers.map((a) => a.text)).toEqual([`a${round}`, `b${round}`]);
      expect(op.counts).toMatchObject({ refreshes: round, refreshErrors: 0, grantsRevoked: 0 });
    }
    expect((await current('op')).connection.status).toBe('active');
  });

  it('reports a refused refresh as a lost login to every call that was running, never as a process exit', async () => {
    await client.call('services.registerRemote', { name: 'op-lost', url: op.url, oauth: {} });
    const { event, done } = await startLogin('op-lost');
    await browseLogin(event.authorizationUrl);
    const { service } = await done;
    await op.revokeGrants();
    const answers = await Promise.allSettled([echo(service.id, 'one'), echo(service.id, 'two')]);
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'rejected', reason: { code: 'NEEDS_AUTH', message: expect.stringContaining('wispctl mcp login op-lost') } });
    }
    expect((await current('op-lost')).connection).toMatchObject({ status: 'needs_auth' });
    await client.call('services.delete', { id: service.id });
  });

  it('refuses a callback whose iss was tampered with (RFC 9207), and saves nothing', async () => {
    await client.call('services.registerRemote', { name: 'op-iss', url: op.url, oauth: {} });
    const { event, done } = await startLogin('op-iss');
    const page = await browseLogin(event.authorizationUrl, (url) => {
      url.searchParams.set('iss', 'http://127.0.0.1:1/evil');
      return url;
    });
    expect(page.status).toBe(400);
    expect(page.text).toContain('issuer mismatch');
    await expect(done).rejects.toMatchObject({ code: 'AUTH_FAILED', message: expect.stringMatching(/issuer mismatch: the callback names the issuer "http:\/\/127\.0\.0\.1:1\/evil", but the login went to/) });
    const service = await current('op-iss');
    const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(after.connection.status).toBe('needs_auth');
  });

  it('refuses a resource whose metadata names an authorization server that states another issuer', async () => {
    await client.call('services.registerRemote', { name: 'op-mismatch', url: op.mismatchUrl, oauth: {} });
    const service = await current('op-mismatch');
    const registrations = op.counts.registrations;
    await expect(client.call('services.login', { id: service.id, configVersion: service.configVersion })).rejects.toMatchObject({
      code: 'AUTH_FAILED',
      message: `issuer mismatch: the resource metadata names the authorization server "${op.issuer.replace('127.0.0.1', 'localhost')}", but that server's metadata states the issuer "${op.issuer}"; refused`,
    });
    expect(op.counts.registrations).toBe(registrations);
  });

  it('logs out from wispctl: revoked at the provider, removed from the keychain; a call then asks for a login', async () => {
    const service = await current('op');
    const out = await wispctl(['mcp', 'logout', 'op']);
    expect(out).toMatchObject({ code: 0, stdout: `op: logged out; the refresh token was revoked at "${op.issuer}"; tokens removed from the keychain\n` });
    expect(op.counts).toMatchObject({ revocations: 1, grantsRevoked: 1 });
    expect(await keychain.get(service.id, 'oauth:tokens')).toBeNull();
    const call = await wispctl(['mcp', 'call', 'op', 'echo', '{"text":"after logout"}']);
    expect(call.code).not.toBe(0);
    expect(call.stderr).toContain('NEEDS_AUTH');
    expect(call.stderr).toContain('wispctl mcp login op');
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    const stat = statSync(file);
    return stat.isDirectory() ? filesUnder(file) : stat.isFile() ? [file] : [];
  });
}

describe('machine-to-machine OAuth settings from wispctl', () => {
  it('registers a client-credentials service with its private key from stdin: in the keychain only', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const events = log.events.length;
    const out = await wispctl(['mcp', 'add-remote', 'm2m', op.url, '--client-id', 'robot', '--grant', 'client-credentials', '--private-key', '--signing-alg', 'ES256'], pem);
    expect(out.code, out.stderr).toBe(0);
    const service = await current('m2m');
    expect(service.oauth).toEqual({ enabled: true, clientId: 'robot', scopes: null, grant: 'client_credentials', clientAuth: 'private_key_jwt', signingAlg: 'ES256' });
    expect((await keychain.get(service.id, 'oauth:private-key'))?.value).toBe(pem.replace(/\n$/, ''));
    const body = pem.split('\n')[1] ?? '';
    expect(body.length).toBeGreaterThan(20);
    for (const file of filesUnder(home.path)) expect(readFileSync(file, 'utf8'), file).not.toContain(body);
    expect(JSON.stringify(log.events.slice(events))).not.toContain(body);
    expect(daemon.output()).not.toContain(body);
  });

  it('refuses settings that do not go together, saying which option is missing', async () => {
    const noId = await wispctl(['mcp', 'add-remote', 'm2m-bad', op.url, '--grant', 'client-credentials', '--client-secret'], 'secret-1');
    expect(noId).toEqual({ code: 2, stdout: '', stderr: 'wispctl: a client secret goes with a pre-registered client id (--client-id) (INVALID_CONFIG)\n' });
    const noAssertion = await wispctl(['mcp', 'add-remote', 'xaa-bad', op.url, '--client-id', 'app', '--grant', 'cross-app', '--client-secret'], 'secret-2');
    expect(noAssertion.stderr).toContain('--idp-token-endpoint');
    expect(noAssertion.code).not.toBe(0);
  });
});
