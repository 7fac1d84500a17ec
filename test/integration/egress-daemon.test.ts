import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { listening } from '../helpers/egress.js';
import { callApproved, describeSandbox, hostileServer } from '../helpers/sandbox.js';
import { activate, EventLog, pidOf } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 34, network grants through the daemon's egress proxy: a real sandboxed server
// (fixtures/servers/hostile/egress.mjs) behind bwrap reaches a granted loopback HTTP server
// (granted by address:port, the one way to reach a loopback address) and is refused one not
// granted, by address and by name, and a name carrying a canary. wispd runs with a resolver
// spy (fixtures/sandbox/dns-spy.mjs) that writes down every name it resolves: the refused
// names are not there (the proxy decides before it resolves).

const root = tempDir('wisp-egd-');
const dnsLog = path.join(root.path, 'dns.log');
const canary = `c2vjcmv0${Math.random().toString(36).slice(2, 10)}`;
const canaryHost = `${canary}.attacker.example`;
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let log: EventLog;
let weather: Service;
const granted = http.createServer((_req, res) => res.end('plain hello'));
const other = http.createServer((_req, res) => res.end('other hello'));
let grantedPort = 0;
let otherPort = 0;

const call = (tool: string, args: Record<string, unknown> = {}): Promise<string> => callApproved(asker, human, log, weather, tool, args);
const refusedEvents = (): Extract<WispEvent, { type: 'network.refused' }>[] => log.events.filter((e): e is Extract<WispEvent, { type: 'network.refused' }> => e.type === 'network.refused');
const auditRecords = (): Record<string, unknown>[] =>
  readFileSync(path.join(daemon.dataDir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.record === 'network');
const ctl = (args: string[]): ReturnType<typeof runWispctl> => runWispctl(['--socket', daemon.socket, ...args]);
const egressDirs = (): string[] => readdirSync(path.dirname(daemon.socket)).filter((name) => name.startsWith('egress-'));

describeSandbox('network grants through the egress proxy (issue 34)', () => {
  beforeAll(async () => {
    writeFileSync(dnsLog, '');
    [grantedPort, otherPort] = await Promise.all([listening(granted, '127.0.0.2'), listening(other, '127.0.0.2')]);
    const env = daemonEnv({ NODE_OPTIONS: `--import=${path.join(repoRoot, 'fixtures', 'sandbox', 'dns-spy.mjs')}`, WISP_TEST_DNS_LOG: dnsLog });
    daemon = await startWispd(path.join(root.path, 'data'), { env });
    asker = await daemon.connect();
    human = await daemon.connect();
    log = await EventLog.follow(human);
    const sandbox = { enabled: true, read: [], write: [], net: { mode: 'hosts' as const, hosts: [`127.0.0.2:${grantedPort}`, `localhost:${grantedPort}`] } };
    await asker.call('services.register', { name: 'weather', command: process.execPath, args: [hostileServer, 'egress'], timeoutMs: 60_000, sandbox });
    weather = await activate(asker, 'weather');
    expect(weather.connection.status).toBe('active');
  });

  afterAll(async () => {
    await asker.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
    killLeftovers();
    await Promise.all([granted, other].map((server) => new Promise((resolve) => server.close(resolve))));
    root.remove();
  });

  it('gives the server the proxy variables (the bridge on its own loopback) and NODE_USE_ENV_PROXY', async () => {
    const env = JSON.parse((await call('env')).replace(/^[^{]*/, '')) as Record<string, string | null>;
    expect(env.HTTP_PROXY).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const name of ['HTTPS_PROXY', 'http_proxy', 'https_proxy']) expect(env[name]).toBe(env.HTTP_PROXY);
    expect(env).toMatchObject({ NO_PROXY: 'localhost,127.0.0.1,::1', NODE_USE_ENV_PROXY: '1' });
  });

  it('reaches the host granted by address and port, and the audit log records the connection without its contents', async () => {
    expect(await call('get', { url: `http://127.0.0.2:${grantedPort}/forecast?token=secret-path` })).toBe('STATUS 200: plain hello');
    await expect.poll(() => auditRecords().filter((r) => r.decision === 'allowed').length, { timeout: 20_000 }).toBe(1);
    const record = auditRecords().find((r) => r.decision === 'allowed');
    expect(record).toMatchObject({ record: 'network', service: 'weather', serviceId: weather.id, via: 'forward', host: '127.0.0.2', port: grantedPort, address: '127.0.0.2' });
    expect(record?.bytesUp).toEqual(expect.any(Number));
    expect(Number(record?.bytesDown)).toBeGreaterThan('plain hello'.length);
    expect(Date.parse(String(record?.endedAt))).toBeGreaterThanOrEqual(Date.parse(String(record?.startedAt)));
    const file = readFileSync(path.join(daemon.dataDir, 'audit.jsonl'), 'utf8');
    expect(file).not.toContain('plain hello');
    expect(file).not.toContain('secret-path');
  });

  it('refuses a port of the same address that is not granted, a name, and a name carrying a canary, before resolving any', async () => {
    expect(await call('get', { url: `http://127.0.0.2:${otherPort}/` })).toMatch(new RegExp(`^STATUS 403: Wisp's egress proxy: 127\\.0\\.0\\.2:${otherPort} is not granted to this service`));
    expect(await call('connect', { authority: 'api.example.com:443' })).toContain(`STATUS 403: Wisp's egress proxy: api.example.com:443 is not granted to this service`);
    const canaryAnswer = await call('connect', { authority: `${canaryHost}:443` });
    expect(canaryAnswer).toContain(`To grant it: wispctl mcp allow weather ${canaryHost}`);
    await expect.poll(() => refusedEvents().length, { timeout: 20_000 }).toBe(3);
    expect(refusedEvents().map((e) => [e.service.name, e.host, e.port, e.reason, e.hint])).toEqual([
      ['weather', '127.0.0.2', otherPort, 'not-granted', `wispctl mcp allow weather 127.0.0.2:${otherPort}`],
      ['weather', 'api.example.com', 443, 'not-granted', 'wispctl mcp allow weather api.example.com'],
      ['weather', canaryHost, 443, 'not-granted', `wispctl mcp allow weather ${canaryHost}`],
    ]);
    const refused = auditRecords().filter((r) => r.decision === 'refused');
    expect(refused.map((r) => [r.host, r.port, r.reason, r.bytesUp, r.bytesDown])).toEqual([
      ['127.0.0.2', otherPort, 'not-granted', 0, 0],
      ['api.example.com', 443, 'not-granted', 0, 0],
      [canaryHost, 443, 'not-granted', 0, 0],
    ]);
    // Neither refused name reached the resolver.
    const looked = readFileSync(dnsLog, 'utf8');
    expect(looked).not.toContain(canary);
    expect(looked).not.toContain('api.example.com');
  });

  it('reaches nothing past the proxy: a direct connection to an address not granted fails sandboxed, and succeeds for the same server unsandboxed', async () => {
    // Sandboxed, its network namespace has only its own loopback: 127.0.0.2 there is nobody.
    expect(await call('direct', { host: '127.0.0.2', port: otherPort })).toMatch(/^ERROR: /);
    const { service } = await asker.call('services.register', {
      name: 'weather-open',
      command: process.execPath,
      args: [hostileServer, 'egress'],
      timeoutMs: 60_000,
      sandbox: { enabled: false, read: [], write: [], net: { mode: 'none' } },
    });
    const open = await activate(asker, service.name);
    expect(open.connection.status).toBe('active');
    try {
      expect(await callApproved(asker, human, log, open, 'direct', { host: '127.0.0.2', port: otherPort })).toBe('STATUS 200: other hello');
    } finally {
      await asker.call('services.delete', { id: open.id });
    }
  });

  it('resolves a granted name, and refuses it when it resolves to a loopback address (reached only when granted by address)', async () => {
    expect(await call('get', { url: `http://localhost:${grantedPort}/` })).toMatch(/^STATUS 403: /);
    // The spy sees what the proxy resolves: this name, granted, was looked up (so the spy's silence above means something).
    expect(readFileSync(dnsLog, 'utf8').split('\n')).toContain('localhost');
    const event = await log.waitFor((e) => e.type === 'network.refused' && e.host === 'localhost');
    expect(event).toMatchObject({ reason: 'near-address', port: grantedPort, hint: null });
    expect(auditRecords().at(-1)).toMatchObject({ host: 'localhost', decision: 'refused', reason: 'near-address' });
  });

  it('wispctl events shows each refusal with how to grant it', async () => {
    const shown = await runWispctl(['--socket', daemon.socket, 'events']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`network.refused  weather tried to reach api.example.com:443: not granted — wispctl mcp allow weather api.example.com`);
    expect(shown.stdout).toContain(`weather tried to reach ${canaryHost}:443: not granted — wispctl mcp allow weather ${canaryHost}`);
  });

  it('wispctl mcp allow grants a host to the running server at once, shown and stored, and --revoke takes it back, without a restart', async () => {
    const pid = pidOf(weather);
    const allowed = await ctl(['mcp', 'allow', 'weather', `127.0.0.2:${otherPort}`]);
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain(`allowed: weather may reach 127.0.0.2:${otherPort} (a live grant: its egress proxy lets the next connection through, no restart)`);
    expect(await call('get', { url: `http://127.0.0.2:${otherPort}/` })).toBe('STATUS 200: other hello');
    const shown = await ctl(['mcp', 'show', 'weather']);
    expect(shown.stdout).toContain(`allowed: 127.0.0.2:${otherPort} (live grants: revoke with wispctl mcp allow weather HOST --revoke)`);
    const stored = JSON.parse(readFileSync(path.join(daemon.dataDir, 'mcp-servers.json'), 'utf8')) as { services: { name: string; netGrants?: string[] }[] };
    expect(stored.services.find((s) => s.name === 'weather')?.netGrants).toEqual([`127.0.0.2:${otherPort}`]);
    expect(await ctl(['mcp', 'allow', 'weather', `127.0.0.2:${otherPort}`])).toMatchObject({ code: 0, stdout: expect.stringContaining(`weather may reach 127.0.0.2:${otherPort} already`) });
    const revoked = await ctl(['mcp', 'allow', 'weather', `127.0.0.2:${otherPort}`, '--revoke']);
    expect(revoked.stdout).toContain(`revoked: weather may no longer reach 127.0.0.2:${otherPort}`);
    expect(await call('get', { url: `http://127.0.0.2:${otherPort}/` })).toMatch(/^STATUS 403: /);
    // The same server all along, at the same configVersion.
    const now = (await asker.call('services.get', { name: 'weather' })).service;
    expect([pidOf(now), now.configVersion, now.sandbox]).toEqual([pid, weather.configVersion, weather.sandbox]);
  });

  it('wispctl mcp allow refuses what is not a host, and a profile grant is taken back with mcp sandbox, not here', async () => {
    for (const bad of ['api.example.com:99999', 'evil host', 'a/b', '*.com', '[fe80::1%eth0]:443']) {
      const refused = await ctl(['mcp', 'allow', 'weather', bad]);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr, bad).toMatch(/^wispctl: host: .*\(INVALID_PARAMS\)\n$/);
    }
    const profileGrant = await ctl(['mcp', 'allow', 'weather', `127.0.0.2:${grantedPort}`, '--revoke']);
    expect(profileGrant.stderr).toContain(`127.0.0.2:${grantedPort} is a grant of weather's sandbox profile, not a live one: take it back with wispctl mcp sandbox weather --revoke-net 127.0.0.2:${grantedPort}`);
    expect((await ctl(['mcp', 'allow', 'weather', 'api.example.com', '--revoke'])).stderr).toContain('api.example.com is not granted to weather');
  });

  it('for a service with no network, mcp allow is a sandbox change: host grants, a new configVersion, disabled until trusted again', async () => {
    await asker.call('services.register', { name: 'quiet', command: process.execPath, args: [hostileServer, 'egress'] });
    const changed = await ctl(['mcp', 'allow', 'quiet', 'API.Example.com:443']);
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain('quiet had no network: its sandbox now grants api.example.com:443 (a sandbox change: it is disabled, configVersion 2; trust it again with wispctl mcp activate quiet)');
    const { service } = await asker.call('services.get', { name: 'quiet' });
    expect([service.configVersion, service.sandbox]).toEqual([2, { status: 'on', read: [], write: [], net: { mode: 'hosts', hosts: ['api.example.com:443'] } }]);
  });

  it('the proxy runs only while its server does: its private directory is gone once the server stops', async () => {
    expect(egressDirs()).toHaveLength(1);
    await asker.call('services.disable', { id: weather.id });
    await expect.poll(egressDirs, { timeout: 20_000 }).toEqual([]);
  });

  it('a server that fails to start leaves no proxy behind', async () => {
    const sandbox = { enabled: true, read: [], write: [], net: { mode: 'hosts' as const, hosts: ['api.example.com'] } };
    const { service } = await asker.call('services.register', { name: 'broken', command: process.execPath, args: [hostileServer, 'no-such-mode'], timeoutMs: 30_000, sandbox });
    const activated = await asker.call('services.activate', { id: service.id, configVersion: service.configVersion });
    expect(activated.service.connection).toMatchObject({ status: 'failed', message: 'the server exited (exit status 1)' });
    await expect.poll(egressDirs, { timeout: 20_000 }).toEqual([]);
    expect(existsSync(path.dirname(daemon.socket))).toBe(true);
  });
});
