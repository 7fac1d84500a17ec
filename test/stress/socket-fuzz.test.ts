import { readdirSync } from 'node:fs';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

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
});
