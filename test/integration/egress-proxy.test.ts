import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectPinned } from '../../src/mcp/sandbox/egress-destination.js';
import { EgressProxy, type EgressProxyOptions } from '../../src/mcp/sandbox/egress-proxy.js';
import { grantsDecider, type EgressDecider } from '../../src/mcp/sandbox/egress-grants.js';
import { EgressRecorder, grants, listening } from '../helpers/egress.js';
import { repoRoot, tempDir } from '../helpers/wispd.js';

/**
 * The egress proxy with real sockets: a real HTTP server, a TCP echo server and an HTTPS
 * server (fixtures/tls, a certificate for 127.0.0.1), all on 127.0.0.1, reached through the
 * proxy's Unix socket. They are granted by address, the one way a loopback address is
 * reached (docs/security.md); a name that resolves there (localhost) is refused.
 */

const tlsDir = path.join(repoRoot, 'fixtures', 'tls');

interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly socket: net.Socket;
  /** What followed the head (a refusal's body, or the first bytes of a tunnel). */
  readonly rest: Buffer;
}

/** Sends `request` on a new connection to the proxy and reads the answer's head. */
function raw(socketPath: string, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.removeListener('data', onData);
      socket.pause();
      const head = buffer.subarray(0, end).toString();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, socket, rest: buffer.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(request);
  });
}

function connectRequest(authority: string, extra = ''): string {
  return `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${extra}\r\n`;
}

/** The rest of what a socket sends, until it closes. */
function readAll(socket: net.Socket | tls.TLSSocket, first: Buffer = Buffer.alloc(0)): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [first];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.resume();
  });
}

function forward(socketPath: string, url: string, headers: http.OutgoingHttpHeaders = {}, upload?: Buffer): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const method = upload === undefined ? 'GET' : 'POST';
    const req = http.request({ socketPath, method, path: url, headers: { host: new URL(url).host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.once('error', reject);
    req.end(upload);
  });
}

describe('egress proxy', () => {
  const dir = tempDir('wisp-egress-');
  const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const body = 'x'.repeat(5000);
  let connections = 0;
  const web = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    let uploaded = 0;
    req.on('data', (chunk: Buffer) => (uploaded += chunk.length));
    req.once('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'x-target': 'web', 'x-uploaded': String(uploaded) }).end(body));
  });
  const echoed = new Set<net.Socket>();
  const echo = net.createServer((socket) => {
    connections += 1;
    echoed.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => echoed.delete(socket));
    socket.pipe(socket);
  });
  const secure = https.createServer({ cert: readFileSync(path.join(tlsDir, 'server.pem')), key: readFileSync(path.join(tlsDir, 'server.key')) }, (_req, res) => res.end('secure hello'));
  let webPort = 0;
  let echoPort = 0;
  let securePort = 0;
  const proxies: EgressProxy[] = [];
  let count = 0;

  async function start(options: Partial<EgressProxyOptions> & { grants?: string[] }): Promise<{ proxy: EgressProxy; recorder: EgressRecorder }> {
    const recorder = new EgressRecorder();
    const allowed = grants(...(options.grants ?? []));
    count += 1;
    const proxy = await EgressProxy.listen({
      serviceId: 'svc-weather',
      label: 'weather',
      socketPath: path.join(dir.path, 'egress', `p${count}.sock`),
      decide: grantsDecider(() => allowed),
      onAudit: recorder.onAudit,
      onRefused: recorder.onRefused,
      ...options,
    });
    proxies.push(proxy);
    return { proxy, recorder };
  }

  beforeAll(async () => {
    [webPort, echoPort, securePort] = await Promise.all([listening(web), listening(echo), listening(secure)]);
  });
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });
  afterAll(async () => {
    web.closeAllConnections();
    secure.closeAllConnections();
    for (const socket of echoed) socket.destroy();
    await Promise.all([web, echo, secure].map((server) => new Promise((resolve) => server.close(resolve))));
    dir.remove();
  });

  it('tunnels a CONNECT to a granted address and records the bytes each way, never the contents', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${echoPort}`] });
    // The first bytes go with the CONNECT itself, before its answer (as a TLS client's hello may).
    const answer = await raw(proxy.socketPath, `${connectRequest(`127.0.0.1:${echoPort}`)}early`);
    expect(answer.status).toBe(200);
    const payload = Buffer.alloc(1000, 'a');
    const back = new Promise<string>((resolve) => {
      let got = answer.rest.toString();
      answer.socket.on('data', (chunk: Buffer) => {
        got += chunk.toString();
        if (got.length >= 1005) resolve(got);
      });
      answer.socket.resume();
    });
    answer.socket.write(payload);
    expect(await back).toBe(`early${payload.toString()}`);
    answer.socket.end();
    const record = await recorder.audit(1);
    expect(record).toMatchObject({ serviceId: 'svc-weather', via: 'connect', host: '127.0.0.1', port: echoPort, address: '127.0.0.1', decision: 'allowed', bytesUp: 1005, bytesDown: 1005 });
    expect(Date.parse(record.endedAt)).toBeGreaterThanOrEqual(Date.parse(record.startedAt));
    expect(JSON.stringify(record)).not.toContain('aaaa');
  });

  it('carries TLS through the tunnel to an HTTPS server granted by address, verified against its CA', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${securePort}`] });
    const answer = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${securePort}`));
    expect(answer.status).toBe(200);
    const secured = tls.connect({ socket: answer.socket, servername: '127.0.0.1', ca: readFileSync(path.join(tlsDir, 'ca.pem')) });
    await new Promise<void>((resolve, reject) => secured.once('secureConnect', resolve).once('error', reject));
    secured.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(await readAll(secured)).toContain('secure hello');
    const record = await recorder.audit(1);
    expect(record).toMatchObject({ decision: 'allowed', via: 'connect', port: securePort });
    expect(record.bytesUp).toBeGreaterThan(100);
    expect(record.bytesDown).toBeGreaterThan(500);
  });

  it('forwards an absolute http:// request without the proxy headers, and streams the answer back', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${webPort}`] });
    const url = `http://127.0.0.1:${webPort}/forecast?token=abc`;
    const upload = Buffer.alloc(3000, 'u');
    const answer = await forward(proxy.socketPath, url, { 'proxy-authorization': 'Basic c2VjcmV0', 'x-client': 'mcp' }, upload);
    expect(answer).toMatchObject({ status: 200, body });
    expect(answer.headers).toMatchObject({ 'x-target': 'web', 'x-uploaded': '3000' });
    const hit = seen.at(-1);
    expect(hit?.url).toBe('/forecast?token=abc');
    expect(hit?.headers).toMatchObject({ host: `127.0.0.1:${webPort}`, 'x-client': 'mcp' });
    expect(hit?.headers['proxy-authorization']).toBeUndefined();
    const record = await recorder.audit(1);
    expect(record).toMatchObject({ via: 'forward', decision: 'allowed', host: '127.0.0.1', port: webPort, address: '127.0.0.1' });
    expect(record.bytesUp).toBeGreaterThan(upload.length);
    expect(record.bytesDown).toBeGreaterThan(body.length);
    expect(JSON.stringify(record)).not.toContain('token');
  });

  it('refuses a host not granted with 403 and how to grant it, and never resolves its name', async () => {
    const looked: string[] = [];
    const { proxy, recorder } = await start({
      grants: ['api.example.com'],
      resolve: (host) => {
        looked.push(host);
        return Promise.resolve(['93.184.216.34']);
      },
    });
    const tunnel = await raw(proxy.socketPath, connectRequest('c2VjcmV0.attacker.example:443'));
    expect(tunnel.status).toBe(403);
    expect(tunnel.head).toContain('Proxy-Status: wisp; error=http_request_denied');
    // Hosts are compared and shown lowercase (egress-grants.ts).
    expect(await readAll(tunnel.socket, tunnel.rest)).toContain('c2vjcmv0.attacker.example:443 is not granted to this service.\nTo grant it: wispctl mcp allow weather c2vjcmv0.attacker.example');
    const plain = await forward(proxy.socketPath, 'http://elsewhere.example/');
    expect(plain.status).toBe(403);
    expect(plain.body).toContain('elsewhere.example:80 is not granted');
    expect(looked).toEqual([]);
    expect(recorder.refusals).toEqual([
      expect.objectContaining({ kind: 'destination', serviceId: 'svc-weather', host: 'c2vjcmv0.attacker.example', port: 443, reason: 'not-granted', hint: 'wispctl mcp allow weather c2vjcmv0.attacker.example' }),
      expect.objectContaining({ host: 'elsewhere.example', port: 80, reason: 'not-granted' }),
    ]);
    expect(recorder.audits.map((record) => [record.via, record.host, record.decision, record.bytesUp, record.bytesDown])).toEqual([
      ['connect', 'c2vjcmv0.attacker.example', 'refused', 0, 0],
      ['forward', 'elsewhere.example', 'refused', 0, 0],
    ]);
  });

  it('refuses another port of a granted address, and the IPv4-mapped spelling of a granted address', async () => {
    const before = connections;
    const { proxy } = await start({ grants: [`127.0.0.1:${echoPort}`] });
    expect((await raw(proxy.socketPath, connectRequest(`127.0.0.1:${webPort}`))).status).toBe(403);
    expect((await raw(proxy.socketPath, connectRequest(`[::ffff:127.0.0.1]:${echoPort}`))).status).toBe(403);
    expect(connections).toBe(before);
  });

  it('refuses a granted name that resolves to loopback (localhost), or to a private address among public ones', async () => {
    const before = connections;
    const { proxy, recorder } = await start({ grants: [`localhost:${echoPort}`] });
    const answer = await raw(proxy.socketPath, connectRequest(`localhost:${echoPort}`));
    expect(answer.status).toBe(403);
    expect(answer.head).toContain('error=destination_ip_prohibited');
    expect(await readAll(answer.socket, answer.rest)).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address, reached only when that address itself is granted/);
    expect(connections).toBe(before);
    expect(recorder.refusals[0]).toMatchObject({ reason: 'near-address', host: 'localhost' });
    expect(recorder.refusals[0]).not.toHaveProperty('hint');

    const rebinding = await start({ grants: ['rebind.example.com'], resolve: () => Promise.resolve(['93.184.216.34', '169.254.169.254']) });
    const metadata = await forward(rebinding.proxy.socketPath, 'http://rebind.example.com/latest/meta-data/');
    expect(metadata.status).toBe(403);
    expect(metadata.body).toContain('rebind.example.com resolves to 169.254.169.254, a link-local address');
    expect(await rebinding.recorder.audit(1)).toMatchObject({ decision: 'refused', reason: 'near-address', address: '169.254.169.254' });
  });

  it('refuses the unspecified and multicast addresses even when granted by address', async () => {
    const { proxy } = await start({ grants: [`0.0.0.0:${echoPort}`, `224.0.0.1:${echoPort}`] });
    const unspecified = await raw(proxy.socketPath, connectRequest(`0.0.0.0:${echoPort}`));
    expect(unspecified.status).toBe(403);
    expect(await readAll(unspecified.socket, unspecified.rest)).toContain('an unspecified address');
    expect((await raw(proxy.socketPath, connectRequest(`224.0.0.1:${echoPort}`))).status).toBe(403);
  });

  it('connects to the pinned addresses only, trying each (Happy Eyeballs), never resolving the name again', async () => {
    // The name does not exist: were it resolved, the connection would fail. ::1 has no listener; 127.0.0.1 has.
    const socket = await connectPinned('pinned.invalid', echoPort, ['::1', '127.0.0.1'], 5_000, new AbortController().signal);
    expect(socket.remoteAddress).toBe('127.0.0.1');
    socket.destroy();
  });

  it('gives up on a name that does not resolve within the connect timeout (502), freeing its slot', async () => {
    const { proxy, recorder } = await start({ grants: ['slow.example.com'], resolve: () => new Promise(() => undefined), limits: { connectTimeoutMs: 200, maxConnections: 1 } });
    const answer = await raw(proxy.socketPath, connectRequest('slow.example.com:443'));
    expect(answer.status).toBe(502);
    expect(await readAll(answer.socket, answer.rest)).toContain('slow.example.com did not resolve (ETIMEOUT)');
    expect(await recorder.audit(1)).toMatchObject({ decision: 'failed', host: 'slow.example.com' });
    expect(proxy.connections).toBe(0);
  });

  it('answers 431 to a request head over the cap, and reports it', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${echoPort}`], limits: { maxHeaderBytes: 4096 } });
    const answer = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`, `X-Padding: ${'p'.repeat(8192)}\r\n`));
    expect(answer.status).toBe(431);
    expect(await readAll(answer.socket, answer.rest)).toContain('a request head is at most 4096 bytes');
    expect(recorder.refusals).toEqual([expect.objectContaining({ kind: 'request', reason: 'headers-too-large' })]);
    expect(recorder.audits).toEqual([]);
  });

  it('holds at most maxConnections at once: the next is answered 503, and a slot freed is taken again', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${echoPort}`], limits: { maxConnections: 2 } });
    const first = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    const second = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(proxy.connections).toBe(2);
    const third = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    expect(third.status).toBe(503);
    expect(await readAll(third.socket, third.rest)).toContain('this service has its 2 connections open at once already');
    expect(recorder.refusals.at(-1)).toMatchObject({ reason: 'too-many-connections' });
    first.socket.end();
    await recorder.audit(2);
    expect(recorder.audits.map((record) => record.decision)).toEqual(['refused', 'allowed']);
    const fourth = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    expect(fourth.status).toBe(200);
    second.socket.destroy();
    fourth.socket.destroy();
  });

  it('closes a tunnel with no byte either way for idleTimeoutMs', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${echoPort}`], limits: { idleTimeoutMs: 200 } });
    const answer = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    expect(answer.status).toBe(200);
    await readAll(answer.socket, answer.rest);
    expect(await recorder.audit(1)).toMatchObject({ decision: 'allowed', bytesUp: 0, bytesDown: 0 });
  });

  it('waits for a decider that asks a human, and withdraws the question when the client goes away', async () => {
    const asked: { host: string; port: number; signal: AbortSignal; answer: (decision: 'allow' | 'deny') => void }[] = [];
    const decide: EgressDecider = (host, port, signal) => new Promise((answer) => asked.push({ host, port, signal, answer }));
    const { proxy } = await start({ decide });
    const pending = raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toMatchObject({ host: '127.0.0.1', port: echoPort });
    asked[0]?.answer('allow');
    const answer = await pending;
    expect(answer.status).toBe(200);
    answer.socket.destroy();

    const leaving = net.connect(proxy.socketPath);
    leaving.write(connectRequest(`127.0.0.1:${echoPort}`));
    await expect.poll(() => asked.length).toBe(2);
    const question = asked[1];
    const withdrawn = new Promise<void>((resolve) => question?.signal.addEventListener('abort', () => resolve()));
    leaving.destroy();
    await withdrawn;
    question?.answer('deny');
  });

  it('answers 400 to what is no proxy request: an origin-form request, https:// to forward, a CONNECT without a port', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${webPort}`] });
    const origin = await raw(proxy.socketPath, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(origin.status).toBe(400);
    const secureForward = await raw(proxy.socketPath, 'GET https://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n');
    expect(secureForward.status).toBe(400);
    expect(await readAll(secureForward.socket, secureForward.rest)).toContain('tunnels it with CONNECT');
    const portless = await raw(proxy.socketPath, connectRequest('api.example.com'));
    expect(portless.status).toBe(400);
    expect(recorder.refusals.map((refusal) => [refusal.kind, refusal.reason])).toEqual([
      ['request', 'bad-request'],
      ['request', 'bad-request'],
      ['request', 'bad-request'],
    ]);
    origin.socket.destroy();
  });

  it('close() ends open tunnels (each recorded before it resolves) and removes the socket', async () => {
    const { proxy, recorder } = await start({ grants: [`127.0.0.1:${echoPort}`] });
    const answer = await raw(proxy.socketPath, connectRequest(`127.0.0.1:${echoPort}`));
    expect(answer.status).toBe(200);
    await proxy.close();
    expect(recorder.audits).toEqual([expect.objectContaining({ decision: 'allowed' })]);
    expect(existsSync(proxy.socketPath)).toBe(false);
    answer.socket.destroy();
  });

  it('refuses to listen in a directory others can enter, and replaces a stale socket of its own', async () => {
    const open = path.join(dir.path, 'open');
    mkdirSync(open, { mode: 0o755 });
    await expect(start({ socketPath: path.join(open, 'p.sock') })).rejects.toThrow(/open to group or others/);
    const stalePath = path.join(dir.path, 'egress', 'stale.sock');
    // A listener killed with SIGKILL leaves its socket file behind, as a daemon's kill -9 would.
    const holder = spawn(process.execPath, ['-e', 'require("net").createServer().listen(process.argv[1], () => console.log("up"))', stalePath], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    expect(existsSync(stalePath)).toBe(true);
    const { proxy } = await start({ socketPath: stalePath, grants: [`127.0.0.1:${webPort}`] });
    expect((await forward(proxy.socketPath, `http://127.0.0.1:${webPort}/`)).status).toBe(200);
  });
});
