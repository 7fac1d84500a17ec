import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { startSteeringServer, startTarget, type SteeringFixture, type TargetFixture } from '../../fixtures/servers/steering-server.mjs';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A remote server may not steer the daemon's requests besides its MCP connection (OAuth
 * discovery, registration, tokens): resource metadata only from its own origin, endpoints only
 * on its issuer's, never to an address nearer to this machine than its own URL, and no body
 * over 1 MB. Real HTTP servers on 127.0.0.1 count what reaches them. For the address rule a
 * test server must stand for a public one: the in-process daemon's `outbound.countAsPublic`
 * seam (test-only, docs/security.md) counts its one 127.0.0.1 port as a public address.
 */
const started: { close(): Promise<void> }[] = [];
async function steering(options: Parameters<typeof startSteeringServer>[0] = {}): Promise<SteeringFixture> {
  const server = await startSteeringServer(options);
  started.push(server);
  return server;
}
async function target(): Promise<TargetFixture> {
  const server = await startTarget();
  started.push(server);
  return server;
}
afterAll(async () => {
  for (const server of started) await server.close();
});

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

async function activate(client: WispClient, service: Service): Promise<Service['connection']> {
  return (await client.call('services.activate', { id: service.id, configVersion: service.configVersion })).service.connection;
}

describe('a remote server steering the daemon at activation (a spawned wispd)', () => {
  const home = tempDir();
  let daemon: RunningDaemon;
  let client: WispClient;
  beforeAll(async () => {
    daemon = await startWispd(home.path);
    client = await daemon.connect();
  });
  afterAll(async () => {
    await client.close();
    killLeftovers();
    home.remove();
  });

  it('never requests a resource_metadata URL on another origin: the activation fails DESTINATION_REFUSED and the target sees nothing', async () => {
    const victim = await target();
    const hostile = await steering({ resourceMetadata: `${victim.base}/admin/flush?all=1` });
    const { service } = await client.call('services.registerRemote', { name: 'steers-metadata', url: hostile.url });
    const connection = await activate(client, service);
    expect(victim.requests).toEqual([]);
    expect(connection).toMatchObject({ status: 'failed', code: 'DESTINATION_REFUSED', message: expect.stringContaining('another origin') });
    expect(connection).toMatchObject({ message: expect.stringContaining(victim.base) });
  });

  it.skipIf(process.platform !== 'linux')('reads at most 1 MB of resource metadata: a 50 MB body fails FRAME_TOO_LARGE, and the daemon keeps none of it', async () => {
    // VmRSS moves with the garbage collector alone: wispd's old generation grows in steps of
    // 8 MB between full collections (heap-flags.ts), and on a loaded machine two steps were
    // seen with no metadata kept at all. So each side is the least seen over several
    // activations (401s with small metadata first, which also load everything asking where
    // to log in needs; then 50 MB of it), and the bound is three such steps: reading one
    // body whole held 50 MB or more. What the server got into its socket is exact.
    const leastRss = async (label: string, options: Parameters<typeof startSteeringServer>[0], times: number): Promise<{ kb: number; servers: SteeringFixture[]; states: Service['connection'][] }> => {
      const servers: SteeringFixture[] = [];
      const states: Service['connection'][] = [];
      let kb = Infinity;
      for (let i = 0; i < times; i++) {
        const server = await steering(options);
        servers.push(server);
        const { service } = await client.call('services.registerRemote', { name: `${label}-${i}`, url: server.url });
        states.push(await activate(client, service));
        kb = Math.min(kb, rssKb(daemon.pid));
      }
      return { kb, servers, states };
    };
    const small = await leastRss('small-metadata', {}, 3);
    expect(small.states[0]).toMatchObject({ status: 'needs_auth', authorizationServer: small.servers[0]?.base });
    const huge = await leastRss('huge-metadata', { hugeMetadataBytes: 50 * 1024 * 1024 }, 4);
    for (const state of huge.states) expect(state).toMatchObject({ status: 'failed', code: 'FRAME_TOO_LARGE', message: expect.stringContaining('1048576-byte limit') });
    // What each wrote before the daemon stopped reading: 1 MB, plus what the sockets' buffers took.
    for (const server of huge.servers) expect(server.hugeBytesSent).toBeLessThan(16 * 1024 * 1024);
    expect(huge.kb - small.kb, `least VmRSS ${small.kb} kB after small metadata, ${huge.kb} kB after 50 MB`).toBeLessThan(24 * 1024);
  });
});

describe('a remote server steering a login (an in-process daemon)', () => {
  const home = tempDir();
  let daemon: InProcessDaemon;
  let client: WispClient;
  let victim: TargetFixture;
  let viaDns: TargetFixture;
  let publicByName: SteeringFixture;
  let publicByAddress: SteeringFixture;
  beforeAll(async () => {
    victim = await target();
    viaDns = await target();
    // "Public" servers (the seam) that name an authorization server on this machine: by a name
    // that resolves to loopback (localhost, through the system resolver), and by address.
    publicByName = await steering({ authorizationServers: [`http://localhost:${new URL(viaDns.base).port}/`] });
    publicByAddress = await steering({ authorizationServers: [`${victim.base}/`] });
    daemon = await startInProcess(home.path, {
      outbound: { countAsPublic: [new URL(publicByName.base).host, new URL(publicByAddress.base).host] },
    });
    client = daemon.client;
  });
  afterAll(async () => {
    await daemon.stop();
    home.remove();
  });

  async function login(name: string, url: string): Promise<unknown> {
    const { service } = await client.call('services.registerRemote', { name, url, oauth: {} });
    return client.call('services.login', { id: service.id, configVersion: service.configVersion }).then(
      () => 'logged in',
      (error: unknown) => error,
    );
  }

  it('refuses an authorization server that names its registration endpoint on another origin, before any POST', async () => {
    const elsewhere = await target();
    const hostile = await steering({ endpoints: { registration_endpoint: `${elsewhere.base}/register` } });
    const outcome = await login('steers-registration', hostile.url);
    expect(elsewhere.requests).toEqual([]);
    expect(outcome).toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('registration_endpoint on another origin') });
    expect(hostile.requests.filter((r) => r.method === 'POST' && r.url !== '/mcp')).toEqual([]);
  });

  it('refuses a token endpoint on another origin too (no pre-registered client)', async () => {
    const elsewhere = await target();
    const hostile = await steering({ endpoints: { token_endpoint: `${elsewhere.base}/token` } });
    const outcome = await login('steers-token', hostile.url);
    expect(elsewhere.requests).toEqual([]);
    expect(outcome).toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('token_endpoint') });
  });

  it('a public server may not send the login to this machine: a name resolving to loopback is never asked', async () => {
    const outcome = await login('public-to-localhost', publicByName.url);
    expect(viaDns.requests).toEqual([]);
    expect(outcome).toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringMatching(/"http:\/\/localhost:\d+" is a loopback address \((127\.0\.0\.1|::1)\)/) });
    // Its own metadata, on its own (public) origin, was read: the refusal is of where it pointed.
    expect(publicByName.requests.map((r) => r.url)).toContain('/.well-known/oauth-protected-resource/mcp');
  });

  it('nor an authorization server at a loopback address', async () => {
    const outcome = await login('public-to-loopback', publicByAddress.url);
    expect(victim.requests).toEqual([]);
    expect(outcome).toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('is a loopback address (127.0.0.1)') });
  });

  it('a server on this machine may name an authorization server on this machine (the user\'s own)', async () => {
    const own = await target();
    const local = await steering({ authorizationServers: [`${own.base}/`] });
    const outcome = await login('local-to-local', local.url);
    // The target is asked for its metadata; its empty answer then fails the login, for another reason.
    expect(own.requests.map((r) => r.url)).toContain('/.well-known/oauth-authorization-server');
    expect(outcome).not.toMatchObject({ code: 'DESTINATION_REFUSED' });
  });
});
