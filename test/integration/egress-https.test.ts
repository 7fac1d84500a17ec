import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { listening } from '../helpers/egress.js';
import { callApproved, describeSandbox, hostileServer } from '../helpers/sandbox.js';
import { activate, EventLog } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 34 (proof): "a granted host is reachable through the proxy from a Node server and a
// Python one (a local HTTPS server on a loopback address granted by address stands in for the
// internet)". Both servers run sandboxed behind bwrap with the net granted to 127.0.0.2:PORT
// only; each fetches https://127.0.0.2:PORT/ the way its language's clients do behind
// HTTPS_PROXY (Node: a CONNECT tunnel, then TLS inside it; Python: urllib's ProxyHandler),
// with the host's certificate checked against the test CA. A second HTTPS server, not granted,
// is refused to both, with the refusal in the events.

const root = tempDir('wisp-egh-');
const tls = path.join(repoRoot, 'fixtures', 'tls');
const ca = path.join(tls, 'loopback2-ca.pem');
const pythonServer = path.join(repoRoot, 'fixtures', 'servers', 'python', 'egress_server.py');
const options = { cert: readFileSync(path.join(tls, 'loopback2-server.pem')), key: readFileSync(path.join(tls, 'loopback2-server.key')) };
const granted = https.createServer(options, (req, res) => res.end(`secure hello ${req.url ?? ''}`));
const other = https.createServer(options, (_req, res) => res.end('other secure hello'));
let grantedPort = 0;
let otherPort = 0;
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let log: EventLog;
const services: Record<'node' | 'python', Service | undefined> = { node: undefined, python: undefined };

async function register(name: 'node' | 'python', command: string, args: string[]): Promise<void> {
  const sandbox = { enabled: true, read: [tls, path.dirname(pythonServer)], write: [], net: { mode: 'hosts' as const, hosts: [`127.0.0.2:${grantedPort}`] } };
  const { service } = await asker.call('services.register', { name, command, args, timeoutMs: 60_000, sandbox });
  await asker.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'NODE_EXTRA_CA_CERTS', value: ca, storage: 'session' }, { name: 'FIXTURE_CA_FILE', value: ca, storage: 'session' }] });
  services[name] = await activate(asker, name);
  expect(services[name].connection.status).toBe('active');
}

const fetchFrom = (name: 'node' | 'python', url: string): Promise<string> => {
  const service = services[name];
  if (service === undefined) throw new Error(`${name} is not registered`);
  return callApproved(asker, human, log, service, 'https', { url });
};

describeSandbox('a granted HTTPS host through the egress proxy, from a Node server and a Python one (issue 34)', () => {
  beforeAll(async () => {
    [grantedPort, otherPort] = await Promise.all([listening(granted, '127.0.0.2'), listening(other, '127.0.0.2')]);
    daemon = await startWispd(path.join(root.path, 'data'), { env: daemonEnv() });
    asker = await daemon.connect();
    human = await daemon.connect();
    log = await EventLog.follow(human);
    await register('node', process.execPath, [hostileServer, 'egress-tls']);
    // Debian's python3 (the system's libraries, which the sandbox binds read-only).
    await register('python', '/usr/bin/python3', [pythonServer]);
  }, 60_000);

  afterAll(async () => {
    await asker.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
    killLeftovers();
    await Promise.all([granted, other].map((server) => new Promise((resolve) => server.close(resolve))));
    root.remove();
  });

  it('the Node server reaches the granted host over TLS through a CONNECT tunnel, and is refused the other', async () => {
    expect(await fetchFrom('node', `https://127.0.0.2:${grantedPort}/from-node`)).toBe('STATUS 200: secure hello /from-node');
    expect(await fetchFrom('node', `https://127.0.0.2:${otherPort}/`)).toMatch(new RegExp(`^STATUS 403: Wisp's egress proxy: 127\\.0\\.0\\.2:${otherPort} is not granted to this service`));
  });

  it('the Python server (urllib, HTTPS_PROXY) reaches the granted host, and is refused the other', async () => {
    expect(await fetchFrom('python', `https://127.0.0.2:${grantedPort}/from-python`)).toBe('STATUS 200: secure hello /from-python');
    expect(await fetchFrom('python', `https://127.0.0.2:${otherPort}/`)).toMatch(/^ERROR: .*403/);
    const refused = await log.waitFor((e) => e.type === 'network.refused' && e.service.name === 'python');
    expect(refused).toMatchObject({ host: '127.0.0.2', port: otherPort, reason: 'not-granted', hint: `wispctl mcp allow python 127.0.0.2:${otherPort}` } satisfies Partial<Extract<WispEvent, { type: 'network.refused' }>>);
  });
});
