import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { MemorySecretStore } from '../../src/secrets/index.js';
import { startOAuthServer, type OAuthFixture } from '../../fixtures/servers/oauth-server.mjs';
import { startInProcess } from '../helpers/in-process.js';
import { EventLog } from '../helpers/services.js';
import { browse } from '../helpers/oauth-browse.js';
import { tempDir } from '../helpers/wispd.js';

/**
 * A logout revokes the refresh token only at the authorization server that issued it. A
 * server that names another authorization server after the login (changed, or hostile)
 * must not get the token, nor the client's credentials, and the user must not be told the
 * token was revoked.
 */

/** An authorization server that takes revocations (what it was sent, in order); `urlClientIds`: it takes Client ID Metadata Documents and offers no registration. */
async function startOtherAuthorizationServer(urlClientIds = false): Promise<{ issuer: string; posts: string[]; close: () => Promise<void> }> {
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer: `${base}/`,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          revocation_endpoint: `${base}/revoke`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          ...(urlClientIds ? { client_id_metadata_document_supported: true } : {}),
        }),
      );
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'POST') posts.push(`${req.url ?? ''} ${body}`);
      res.statusCode = req.method === 'POST' ? 200 : 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return { issuer, posts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('a logout after the server named another authorization server', () => {
  let home: ReturnType<typeof tempDir>;
  let oauth: OAuthFixture;
  let other: Awaited<ReturnType<typeof startOtherAuthorizationServer>>;
  let daemon: Awaited<ReturnType<typeof startInProcess>>;
  let client: WispClient;
  let log: EventLog;

  beforeAll(async () => {
    home = tempDir();
    oauth = await startOAuthServer();
    other = await startOtherAuthorizationServer();
    daemon = await startInProcess(home.path, { keychain: new MemorySecretStore() });
    client = await daemon.connect();
    log = await EventLog.follow(client);
  });
  afterAll(async () => {
    await client.close();
    await oauth.close();
    await other.close();
    await daemon.stop();
    home.remove();
  });

  it('sends the token nowhere, says so, and still forgets the login here', async () => {
    await client.call('services.registerRemote', { name: 'turncoat', url: oauth.url, oauth: {} });
    const service: Service = (await client.call('services.get', { name: 'turncoat' })).service;
    const announced = log.next((e) => e.type === 'service.login' && e.service.id === service.id);
    const done = client.call('services.login', { id: service.id, configVersion: service.configVersion });
    const event = (await announced) as Extract<WispEvent, { type: 'service.login' }>;
    expect((await browse(event.authorizationUrl)).status).toBe(200);
    expect((await done).service.connection).toMatchObject({ status: 'active' });

    oauth.nameAuthorizationServer(other.issuer);
    const { service: loggedOut, revocation } = await client.call('services.logout', { id: service.id });
    expect(revocation).toEqual({
      status: 'failed',
      message: `the server now names "${other.issuer}", not "${oauth.issuer}" that issued the login: nothing was sent, and the token stays valid there until it expires`,
    });
    expect(other.posts).toEqual([]);
    expect(loggedOut.connection).toMatchObject({ status: 'needs_auth' });
  });
});

describe('a login at an authorization server that takes only URL-based client ids', () => {
  it('says so, and how to configure one, when the service has none', async () => {
    const home = tempDir();
    const oauth = await startOAuthServer();
    const cimd = await startOtherAuthorizationServer(true);
    const daemon = await startInProcess(home.path, { keychain: new MemorySecretStore() });
    const client = await daemon.connect();
    try {
      oauth.nameAuthorizationServer(cimd.issuer);
      await client.call('services.registerRemote', { name: 'cimd', url: oauth.url, oauth: {} });
      const service: Service = (await client.call('services.get', { name: 'cimd' })).service;
      await expect(client.call('services.login', { id: service.id, configVersion: service.configVersion })).rejects.toMatchObject({
        code: 'AUTH_FAILED',
        message: expect.stringContaining(
          `"${cimd.issuer}" takes URL-based client ids (Client ID Metadata Documents) and offers no dynamic registration, and none is configured: register the service with --client-metadata-url https://`,
        ) as unknown,
      });
      expect(cimd.posts).toEqual([]);
    } finally {
      await client.close();
      await oauth.close();
      await cimd.close();
      await daemon.stop();
      home.remove();
    }
  });
});
