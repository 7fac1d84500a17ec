import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { MemorySecretStore } from '../../src/secrets/index.js';
import { startOAuthServer, type OAuthFixture } from '../../fixtures/servers/oauth-server.mjs';
import { startInProcess } from '../helpers/in-process.js';
import { EventLog } from '../helpers/services.js';
import { browse } from '../helpers/oauth-browse.js';
import { spawn } from 'node:child_process';
import { daemonEnv, killLeftovers, startWispd, tempDir, wispctlBin } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

/**
 * OAuth against a local authorization server built from the SDK's auth router. The test
 * plays the browser: it opens the authorization URL and follows the redirect. The same
 * suite runs twice: with the tokens in a real Secret Service (a spawned wispd; npm test
 * provides one, see keychain.test.ts), and with the in-memory secret store (a daemon in this
 * process), which needs no keyring and always runs.
 */
interface Running {
  readonly socket: string;
  connect(): Promise<WispClient>;
  /** What the daemon wrote to its log (and, spawned, to stdout and stderr). */
  output(): string;
  /** Resolves once the daemon has ended (after daemon.shutdown). */
  readonly ended: Promise<unknown>;
  /** Ends it, whatever state it is in. */
  stop(): Promise<void>;
}

interface Variant {
  readonly name: string;
  readonly runs: boolean;
  /** A daemon on `home`; started again on the same home, it finds the secrets the last one saved. */
  start(home: string): Promise<Running>;
}

const env = daemonEnv({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? '' });

const keyring: Variant = {
  name: 'the OS keychain (a spawned wispd)',
  runs: needs(process.env.WISP_TEST_KEYRING === '1', 'no Secret Service: OAuth with the tokens in the OS keychain (the in-memory variant still runs)'),
  start: async (home) => {
    const daemon = await startWispd(home, { env });
    return {
      socket: daemon.socket,
      connect: () => daemon.connect(),
      output: () => daemon.output(),
      ended: daemon.exited,
      stop: () => {
        killLeftovers();
        return Promise.resolve();
      },
    };
  },
};

function inMemory(): Variant {
  // One store for every start: a restart keeps the login, as the keychain does.
  const keychain = new MemorySecretStore();
  return {
    name: 'the in-memory secret store (an in-process daemon)',
    runs: true,
    start: async (home) => {
      const daemon = await startInProcess(home, { keychain });
      return { socket: daemon.socket, connect: daemon.connect, output: daemon.output, ended: daemon.stopped, stop: daemon.stop };
    },
  };
}

type LoginEvent = Extract<WispEvent, { type: 'service.login' }>;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    const stat = statSync(file);
    return stat.isDirectory() ? filesUnder(file) : stat.isFile() ? [file] : [];
  });
}

for (const variant of [keyring, inMemory()]) oauthSuite(variant);

function oauthSuite(variant: Variant): void {
  let home: ReturnType<typeof tempDir>;
  let oauth: OAuthFixture;
  let daemon: Running;
  let client: WispClient;
  let log: EventLog;

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

  describe.skipIf(!variant.runs)(`OAuth for remote servers, with ${variant.name}`, () => {
    beforeAll(async () => {
      home = tempDir();
      oauth = await startOAuthServer();
      daemon = await variant.start(home.path);
      client = await daemon.connect();
      log = await EventLog.follow(client);
      client.onEvent((event) => {
        if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
      });
    });
    afterAll(async () => {
      await client.close();
      await oauth.close();
      await daemon.stop();
      home.remove();
    });

    it('shows needs_auth with the authorization server until someone logs in', async () => {
      await client.call('services.registerRemote', { name: 'protected', url: oauth.url, oauth: {} });
      const service = await current('protected');
      expect(service.oauth).toEqual({ enabled: true, clientId: null, scopes: null });
      const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
      expect(after.connection).toMatchObject({ status: 'needs_auth', authorizationServer: oauth.issuer });
    });

    it('logs in: loopback callback, PKCE code exchange, tokens in the keychain only, then active', async () => {
      const { event, done } = await startLogin('protected');
      expect(event.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(new URL(event.authorizationUrl).searchParams.get('code_challenge_method')).toBe('S256');
      const page = await browse(event.authorizationUrl);
      expect(page).toMatchObject({ status: 200, text: expect.stringContaining('Logged in') });
      const { service } = await done;
      expect(service.connection).toMatchObject({ status: 'active', toolCount: 3 });
      expect(oauth.counts).toMatchObject({ registrations: 1, codeExchanges: 1 });
      const token = oauth.seenTokens.at(-1) ?? '';
      expect(token).not.toBe('');
      for (const file of filesUnder(home.path)) expect(readFileSync(file, 'utf8'), file).not.toContain(token);
      expect(daemon.output()).not.toContain(token);
      expect(JSON.stringify(log.events)).not.toContain(token);
      expect((await client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'with a token' } })).text).toBe('with a token');
    });

    it('refreshes an expired access token on 401 without the user', async () => {
      const service = await current('protected');
      const authorizations = oauth.counts.authorizations;
      oauth.expireAccessTokens();
      expect((await client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'after expiry' } })).text).toBe('after expiry');
      expect(oauth.counts.refreshes).toBe(1);
      expect(oauth.counts.authorizations).toBe(authorizations);
    });

    it('keeps the login across a daemon restart (the keychain), and forgets it on logout', async () => {
      await client.call('daemon.shutdown');
      await daemon.ended;
      daemon = await variant.start(home.path);
      client = await daemon.connect();
      log = await EventLog.follow(client);
      const service = await current('protected');
      expect((await client.call('services.activate', { id: service.id, configVersion: service.configVersion })).service.connection).toMatchObject({ status: 'active' });
      const { service: loggedOut, revocation } = await client.call('services.logout', { id: service.id });
      expect(loggedOut.connection).toMatchObject({ status: 'needs_auth', message: expect.stringContaining('wispctl mcp login protected') });
      expect(revocation.status).toMatch(/^(revoked|unsupported)$/);
      await expect(client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: 'after logout' } })).rejects.toMatchObject({
        code: 'NEEDS_AUTH',
        message: expect.stringContaining('wispctl mcp login protected'),
      });
      const { service: again } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
      expect(again.connection).toMatchObject({ status: 'needs_auth' });
    });

    it('refuses a callback whose state does not match the login, and saves nothing', async () => {
      const { event, done } = await startLogin('protected');
      const forged = new URL(event.redirectUri);
      forged.searchParams.set('code', 'stolen-code');
      forged.searchParams.set('state', 'not-the-state');
      const answer = await fetch(forged);
      expect(answer.status).toBe(400);
      await expect(done).rejects.toMatchObject({ code: 'AUTH_FAILED', message: expect.stringContaining('state') });
      const service = await current('protected');
      const { service: after } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
      expect(after.connection).toMatchObject({ status: 'needs_auth' });
      // The listener is gone with the failed login.
      await expect(fetch(event.redirectUri)).rejects.toThrow();
    });

    it('refuses a login bound to a configuration that changed since it was shown', async () => {
      const service = await current('protected');
      await expect(client.call('services.login', { id: service.id, configVersion: service.configVersion + 1 })).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    });

    it('logs in from wispctl: it prints the URL, waits for the callback and reports the service active', async () => {
      await client.call('services.registerRemote', { name: 'cli-protected', url: oauth.url, oauth: {} });
      const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, 'mcp', 'login', 'cli-protected', '--no-browser'], { env: daemonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const url = await new Promise<string>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const found = /^\s+(http\S+)$/m.exec(stderr);
          if (found?.[1] !== undefined) resolve(found[1]);
        });
      });
      expect(stderr).toContain('Open this URL to log in to cli-protected');
      await browse(url);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect({ code, stdout }).toEqual({ code: 0, stdout: 'cli-protected: logged in; active, 3 tools\n' });
    });

    it('keeps a pre-registered client\'s secret in the keychain only, and refuses one without a client id', async () => {
      const { service } = await client.call('services.registerRemote', { name: 'confidential', url: oauth.url, oauth: { clientId: 'registered-client', clientSecret: 'client-secret-6611' } });
      expect(service.oauth).toEqual({ enabled: true, clientId: 'registered-client', scopes: null });
      expect(JSON.stringify(service)).not.toContain('client-secret-6611');
      for (const file of filesUnder(home.path)) expect(readFileSync(file, 'utf8'), file).not.toContain('client-secret-6611');
      await expect(client.call('services.registerRemote', { name: 'no-id', url: oauth.url, oauth: { clientSecret: 'x' } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    });
  });
}
