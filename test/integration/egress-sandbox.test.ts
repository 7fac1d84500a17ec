import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EgressProxy } from '../../src/mcp/sandbox/egress-proxy.js';
import { systemResolve } from '../../src/mcp/sandbox/egress-destination.js';
import { grantsDecider } from '../../src/mcp/sandbox/egress-grants.js';
import { egressSandboxParts } from '../../src/mcp/sandbox/egress-launch.js';
import { EgressRecorder, grants, listening, usableBwrap } from '../helpers/egress.js';
import { repoRoot, tempDir } from '../helpers/wispd.js';

/**
 * The egress path end to end, with bubblewrap itself: a sandbox with its own network
 * namespace (bwrap --unshare-all: only its own loopback) runs the bridge (dist's, as the
 * daemon ships it), which runs fixtures/sandbox/egress-client.mjs, a stand-in for a server
 * that reaches the network. The host's servers listen on 127.0.0.2 and are granted by
 * address: inside, NO_PROXY keeps 127.0.0.1 for the namespace's own loopback.
 */

const bwrap = usableBwrap();
const tlsDir = path.join(repoRoot, 'fixtures', 'tls');
const bridgeFile = path.join(repoRoot, 'dist', 'mcp', 'sandbox', 'egress-bridge.mjs');
const client = path.join(repoRoot, 'fixtures', 'sandbox', 'egress-client.mjs');

interface Sandbox {
  readonly child: ChildProcess;
  /** The sandbox's first process as the host sees it (bwrap --info-fd): its process group is the sandbox's. */
  readonly sandboxPid: Promise<number>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

const started: ChildProcess[] = [];

function runSandboxed(socketPath: string, clientArgs: string[], stdin?: string): Sandbox {
  const parts = egressSandboxParts({ socketPath, bridgeFile });
  // The checkout may itself live under /tmp (a clean clone in CI), which the tmpfs hides: it is bound back, read-only (the client's fixtures and node_modules).
  const fixtureMount = ['--ro-bind', repoRoot, repoRoot];
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--info-fd', '3', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', ...fixtureMount, ...parts.bwrapArgs, '--', ...parts.commandPrefix, process.execPath, client, ...clientArgs];
  const child = spawn(bwrap ?? 'bwrap', args, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true, env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: path.join(tlsDir, 'loopback2-ca.pem') } });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  if (stdin !== undefined) child.stdin.end(stdin);
  const info = child.stdio[3] as NodeJS.ReadableStream;
  const sandboxPid = new Promise<number>((resolve, reject) => {
    let text = '';
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /"child-pid":\s*(\d+)/.exec(text);
      if (match !== null) resolve(Number(match[1]));
    });
    info.once('end', () => reject(new Error(`bwrap wrote no child-pid: ${text} ${err}`)));
  });
  sandboxPid.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, sandboxPid, exited, stdout: () => out, stderr: () => err };
}

async function firstLine(sandbox: Sandbox): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (sandbox.stdout().includes('\n')) resolve();
    };
    sandbox.child.stdout?.on('data', check);
    void sandbox.exited.then(() => reject(new Error(`the sandbox ended: ${sandbox.stderr()}`)));
    check();
  });
  return sandbox.stdout().split('\n')[0] ?? '';
}

function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

describe.skipIf(bwrap === undefined)('egress through bubblewrap', () => {
  const dir = tempDir('wisp-egsb-');
  const web = http.createServer((_req, res) => res.end('plain hello'));
  const secure = https.createServer({ cert: readFileSync(path.join(tlsDir, 'loopback2-server.pem')), key: readFileSync(path.join(tlsDir, 'loopback2-server.key')) }, (_req, res) => res.end('secure hello'));
  const recorder = new EgressRecorder();
  const looked: string[] = [];
  let proxy: EgressProxy;
  let webPort = 0;
  let securePort = 0;
  let probe: Record<string, Record<string, unknown>> = {};
  let probeExit: { code: number | null; signal: NodeJS.Signals | null };

  beforeAll(async () => {
    expect(existsSync(bridgeFile), 'the bridge is built (npm run build)').toBe(true);
    [webPort, securePort] = await Promise.all([listening(web, '127.0.0.2'), listening(secure, '127.0.0.2')]);
    const allowed = grants(`127.0.0.2:${webPort}`, `127.0.0.2:${securePort}`);
    proxy = await EgressProxy.listen({ serviceId: 'svc-weather', label: 'weather', socketPath: path.join(dir.path, 'egress', 'weather.sock'), decide: grantsDecider(() => allowed), onAudit: recorder.onAudit, onRefused: recorder.onRefused, resolve: (host) => {
      looked.push(host);
      return systemResolve(host);
    } });
    const config = {
      grantedHttp: `http://127.0.0.2:${webPort}/forecast`,
      grantedHttps: `https://127.0.0.2:${securePort}/forecast`,
      refusedHttps: `https://127.0.0.2:${securePort + 1}/`,
      refusedHttp: 'http://api.example.com/',
      refusedConnect: 'c2VjcmV0.attacker.example:443',
      directHost: '127.0.0.2',
      directPort: webPort,
    };
    const sandbox = runSandboxed(proxy.socketPath, ['probe', JSON.stringify(config)], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    probeExit = await sandbox.exited;
    expect(probeExit, sandbox.stderr()).toEqual({ code: 0, signal: null });
    probe = JSON.parse(sandbox.stdout()) as typeof probe;
  });
  afterEach(() => {
    for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  });
  afterAll(async () => {
    await proxy.close();
    await Promise.all([web, secure].map((server) => new Promise((resolve) => server.close(resolve))));
    dir.remove();
  });

  it('passes stdio through untouched and exits with the server', () => {
    expect(probe.stdin).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(probeExit).toEqual({ code: 0, signal: null });
  });

  it('sets the proxy variables to the bridge, NO_PROXY to the namespace loopback, and NODE_USE_ENV_PROXY', () => {
    const env = probe.env as Record<string, string>;
    expect(env.HTTP_PROXY).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const name of ['HTTPS_PROXY', 'http_proxy', 'https_proxy']) expect(env[name]).toBe(env.HTTP_PROXY);
    expect(env).toMatchObject({ NO_PROXY: 'localhost,127.0.0.1,::1', no_proxy: 'localhost,127.0.0.1,::1', NODE_USE_ENV_PROXY: '1' });
    expect(probe.ownLoopback).toMatchObject({ ok: true, status: 200, body: 'own loopback' });
  });

  it('reaches a granted http:// URL through the proxy, and the connection is in the audit log', () => {
    expect(probe.grantedHttp).toMatchObject({ ok: true, status: 200, body: 'plain hello' });
    const record = recorder.audits.find((entry) => entry.via === 'forward' && entry.decision === 'allowed');
    expect(record).toMatchObject({ serviceId: 'svc-weather', host: '127.0.0.2', port: webPort, address: '127.0.0.2' });
    expect(record?.bytesDown).toBeGreaterThan('plain hello'.length);
  });

  it('reaches a granted https URL by CONNECT, TLS verified end to end', () => {
    expect(probe.grantedHttps).toMatchObject({ ok: true, status: 200, body: 'secure hello' });
    const record = recorder.audits.find((entry) => entry.via === 'connect' && entry.decision === 'allowed');
    expect(record).toMatchObject({ host: '127.0.0.2', port: securePort });
    expect(record?.bytesUp).toBeGreaterThan(0);
  });

  it('refuses what is not granted with 403, in the audit log and as a refusal event', () => {
    expect(probe.refusedHttp).toMatchObject({ ok: true, status: 403, body: expect.stringContaining('api.example.com:80 is not granted to this service') });
    expect(probe.refusedHttps).toMatchObject({ ok: false });
    expect(probe.refusedConnect).toMatchObject({ ok: true, status: 403, body: expect.stringContaining('To grant it: wispctl mcp allow weather c2vjcmv0.attacker.example') });
    expect(recorder.refusals.map((refusal) => (refusal.kind === 'destination' ? [refusal.host, refusal.port, refusal.reason] : []))).toEqual([
      ['127.0.0.2', securePort + 1, 'not-granted'],
      ['api.example.com', 80, 'not-granted'],
      ['c2vjcmv0.attacker.example', 443, 'not-granted'],
    ]);
    expect(recorder.audits.filter((entry) => entry.decision === 'refused')).toHaveLength(3);
    // Not one of those names was looked up (the canary in c2vjcmv0... never reached a DNS server).
    expect(looked).toEqual([]);
  });

  it('has no way out but the proxy: no route off the namespace, nothing of the host on its loopback, no resolver', () => {
    expect(probe.directElsewhere).toMatchObject({ ok: false, code: 'ENETUNREACH' });
    expect(probe.directToTarget).toMatchObject({ ok: false, code: 'ECONNREFUSED' });
    expect(probe.resolveName).toMatchObject({ ok: false });
  });

  it('a TERM to the sandbox process group reaches the server, and the sandbox exits with its status', async () => {
    const sandbox = runSandboxed(proxy.socketPath, ['wait']);
    expect(await firstLine(sandbox)).toMatch(/^ready \d+$/);
    process.kill(-(await sandbox.sandboxPid), 'SIGTERM');
    expect(await sandbox.exited).toEqual({ code: 7, signal: null });
    expect(sandbox.stdout()).toBe(`${sandbox.stdout().split('\n')[0] ?? ''}\nterminated\n`);
  });

  it('a SIGKILL of the bridge ends the server with the sandbox pid namespace', async () => {
    const sandbox = runSandboxed(proxy.socketPath, ['wait']);
    await firstLine(sandbox);
    const [bridge] = childrenOf(await sandbox.sandboxPid);
    const [server] = childrenOf(bridge ?? 0);
    expect(readFileSync(`/proc/${server ?? 0}/cmdline`, 'utf8')).toContain('egress-client.mjs');
    process.kill(bridge ?? 0, 'SIGKILL');
    expect((await sandbox.exited).code).not.toBe(0);
    // The kernel kills the namespace's processes as its init ends; the last may still be being reaped.
    await expect.poll(() => existsSync(`/proc/${server ?? 0}`), { timeout: 10_000 }).toBe(false);
  });
});

describe('egress bridge, outside a sandbox', () => {
  it('refuses a command line without -- COMMAND (exit 64), and says so on stderr', () => {
    const run = spawnSync(process.execPath, [bridgeFile, '--socket', '/nonexistent.sock'], { encoding: 'utf8' });
    expect(run.status).toBe(64);
    expect(run.stderr).toContain('no -- before COMMAND');
    expect(run.stdout).toBe('');
  });

  it('exits 127 when the server command does not exist', () => {
    const run = spawnSync(process.execPath, [bridgeFile, '--socket', '/nonexistent.sock', '--', '/nonexistent/server'], { encoding: 'utf8' });
    expect(run.status).toBe(127);
    expect(run.stderr).toContain('could not start "/nonexistent/server": ENOENT');
  });
});
