import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { methods } from '../../src/core/wire/index.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/** Runs are bounded for CI; WISP_STRESS=1 runs the long form. */
const LONG = process.env.WISP_STRESS === '1';
const home = tempDir();
let daemon: RunningDaemon;
let probe: WispClient;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  probe = await daemon.connect();
});
afterAll(async () => {
  await probe.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * Sends bytes on a fresh connection, then (unless the client half-closes) a status request:
 * resolves once the daemon answered that request or closed the connection. Blank lines and
 * notifications get no answer of their own, so the follow-up shows the daemon still serves.
 */
function exchange(payload: Uint8Array | string, end: boolean): Promise<'answered' | 'closed'> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(daemon.socket);
    let settled = false;
    const settle = (how: 'answered' | 'closed'): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(how);
    };
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('"id":"fuzz-probe"')) settle('answered');
    });
    socket.on('close', () => settle('closed'));
    socket.on('error', () => settle('closed'));
    socket.on('connect', () => {
      socket.write(payload);
      if (end) socket.end();
      else socket.write('{"jsonrpc":"2.0","id":"fuzz-probe","method":"daemon.status"}\n');
    });
    socket.setTimeout(10_000, () => reject(new Error(`no answer and no close for ${String(payload).slice(0, 80)}`)));
  });
}

/** The daemon has seen every connection above close: only the probe is left. */
async function settled(): Promise<void> {
  for (;;) {
    const status = await probe.call('daemon.status');
    if (status.counts.clients === 1) return;
  }
}

const frames = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.concat([Buffer.from(bytes), Buffer.from('\n')])),
  fc.json().map((text) => `${text}\n`),
  fc.jsonValue().map((value) => `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'services.register', params: value })}\n`),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double()), method: fc.constantFrom('daemon.status', 'services.get', 'tools.call', 'approvals.respond', 'nope'), params: fc.jsonValue() }).map((r) => `${JSON.stringify(r)}\n`),
  fc.nat({ max: 200_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}\n`),
  fc.nat({ max: 50_000 }).map((depth) => `{"jsonrpc":"2.0","id":1,"method":"services.register","params":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}\n`),
  fc.constantFrom('{"jsonrpc":"2.0","id":1e999999,"method":"daemon.status"}\n', '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"daemon.status"}\n', '\xff\xfe\n'),
);

describe('control socket under hostile input', () => {
  it('answers or closes on random input, never crashes, and leaks no file descriptors', async () => {
    await settled();
    const before = openFds(daemon.pid);
    await fc.assert(
      fc.asyncProperty(frames, fc.boolean(), async (payload, end) => {
        expect(['answered', 'closed']).toContain(await exchange(payload, end));
      }),
      { numRuns: LONG ? 3000 : 300 },
    );
    // Partial frames: no newline, then the client goes away.
    for (let i = 0; i < 50; i++) expect(await exchange('{"jsonrpc":"2.0","id":1,"meth', true)).toBe('closed');
    // Thousands of connections opened and dropped at once.
    await Promise.all(
      Array.from({ length: LONG ? 10_000 : 2000 }, () => new Promise<void>((resolve) => {
        const socket = net.createConnection(daemon.socket);
        socket.on('connect', () => socket.destroy());
        socket.on('error', () => resolve());
        socket.on('close', () => resolve());
      })),
    );
    await settled();
    expect((await probe.call('daemon.status')).pid).toBe(daemon.pid);
    expect(openFds(daemon.pid)).toBe(before);
  }, 300_000);

  it('stays up and keeps answering a bystander while fuzzed with batches, deep nesting, huge strings and random calls', async () => {
    // Methods that reach outside the daemon (the network, processes) or stop it are left out.
    const unsafe = new Set(['daemon.shutdown', 'services.activate', 'services.login', 'services.register', 'services.registerRemote', 'services.import', 'sources.addProject', 'sources.reload', 'installs.plan', 'installs.start', 'model.setKey', 'model.setSettings', 'sessions.send']);
    const names = Object.keys(methods).filter((name) => !unsafe.has(name));
    const request = fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 300 })), method: fc.oneof(fc.constantFrom(...names), fc.string()), params: fc.oneof(fc.jsonValue(), fc.object()) });
    const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
    const bombs = fc.oneof(
      frames,
      request.map(line),
      fc.array(request, { minLength: 1, maxLength: 100 }).map(line),
      fc.integer({ min: 1, max: 3000 }).map((n) => line(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'rpc.discover' })))),
      fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 64 }).map((batch) => line(batch.map((method, i) => ({ jsonrpc: '2.0', id: i, method })))),
      fc.nat({ max: 150_000 }).map((depth) => `{"jsonrpc":"2.0","id":1,"method":"tools.call","params":{"modelName":"x","arguments":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}\n`),
      fc.nat({ max: 300_000 }).map((depth) => `[{"jsonrpc":"2.0","id":1,"method":"daemon.status","params":{"p":${'['.repeat(depth)}${']'.repeat(depth)}}}]\n`),
      fc.constantFrom(...names).chain((method) => fc.nat({ max: 1_000_000 }).map((size) => `{"jsonrpc":"2.0","id":"big","method":"${method}","params":{"id":"${'x'.repeat(size)}","text":"${'y'.repeat(Math.max(0, 1_000_000 - size - 200))}"}}\n`)),
    );
    // The bystander runs in its own process: what it measures is the daemon, not this
    // process's own work building the fuzz frames.
    const pinger = spawn(process.execPath, [path.join(repoRoot, 'fixtures', 'clients', 'pinger.mjs'), daemon.socket], { stdio: ['pipe', 'pipe', 'inherit'] });
    let report = '';
    pinger.stdout.on('data', (chunk: Buffer) => (report += chunk.toString()));
    const reported = new Promise<void>((resolve) => pinger.once('close', () => resolve()));
    const until = Date.now() + (LONG ? 60_000 : 4_000);
    let sent = 0;
    const fuzzer = async (): Promise<void> => {
      while (Date.now() < until) {
        const [payload] = fc.sample(bombs, 1);
        if (payload === undefined) continue;
        expect(['answered', 'closed']).toContain(await exchange(payload, false));
        sent += 1;
      }
    };
    await Promise.all([fuzzer(), fuzzer(), fuzzer()]);
    pinger.stdin.end();
    await reported;
    const { pings, worstMs, pids } = JSON.parse(report) as { pings: number; worstMs: number; pids: number[] };
    console.log(`fuzz: ${sent} frames; the bystander was answered ${pings} times, worst ${worstMs.toFixed(1)} ms`);
    expect(pids).toEqual([daemon.pid]);
    expect(pings).toBeGreaterThan(10);
    // Not a speed target (the bench has those): a stall like the old 8 s batch fails it, and
    // a shared, loaded 2-CPU machine (a gap of 1.2 s seen at load 14) does not.
    expect(worstMs).toBeLessThan(5000);
    expect((await probe.call('daemon.status')).pid).toBe(daemon.pid);
    expect(daemon.child.exitCode).toBeNull();
  }, 120_000);
});
