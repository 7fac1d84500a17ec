import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { activate, EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Item 7 of issue 12: a server's schema patterns ran in the backtracking engine; "^(a+)+$"
// against 32 `a` and a `!` blocked every client for 14 s (each extra character doubles it).

const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const EVIL = `${'a'.repeat(32)}!`;
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let other: WispClient;
let log: EventLog;
let serviceId: string;

async function register(name: string, variant: string[] = []): Promise<Service> {
  return (await client.call('services.register', { name, command: process.execPath, args: [hostile, 'redos', ...variant] })).service;
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  client = await daemon.connect();
  other = await daemon.connect();
  log = await EventLog.follow(other);
  serviceId = (await register('redos')).id;
  const service = await activate(client, 'redos');
  expect(service.connection.status).toBe('active');
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** Runs `work` while another client asks for the daemon's status; both must finish well under the old 14 s. */
async function whileServed<T>(work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; workMs: number; otherMs: number }> {
  const started = Date.now();
  const pending = work().then(
    (value) => ({ status: 'fulfilled' as const, value }),
    (reason: unknown) => ({ status: 'rejected' as const, reason }),
  );
  const status = await other.call('daemon.status');
  const otherMs = Date.now() - started;
  expect(status.pid).toBe(daemon.pid);
  const result = await pending;
  return { result, workMs: Date.now() - started, otherMs };
}

describe('server-supplied regular expressions', () => {
  it('an input pattern "^(a+)+$" against 32 a and a ! is refused at once, and another client is served meanwhile', async () => {
    const { result, workMs, otherMs } = await whileServed(() => client.call('tools.call', { serviceId, toolName: 'match', arguments: { s: EVIL } }));
    expect(result).toMatchObject({ status: 'rejected', reason: { code: 'INVALID_ARGUMENTS' } });
    expect(workMs).toBeLessThan(5000);
    expect(otherMs).toBeLessThan(5000);
    // No approval was asked for arguments that do not match.
    expect(log.events.filter((e) => e.type === 'approval.requested')).toEqual([]);
  });

  it('a patternProperties key "^(a+)+$" against a property named 32 a and a ! is checked at once', async () => {
    const { result, workMs, otherMs } = await whileServed(() =>
      client.call('tools.call', { serviceId, toolName: 'keys', arguments: { [EVIL]: 1, aaaa: 'not a number' } }),
    );
    expect(result).toMatchObject({ status: 'rejected', reason: { code: 'INVALID_ARGUMENTS', message: expect.stringContaining('/aaaa') } });
    expect(workMs).toBeLessThan(5000);
    expect(otherMs).toBeLessThan(5000);
  });

  it('an outputSchema with the pattern cannot freeze the daemon through the SDK: the result comes back promptly', async () => {
    const asked = log.next((e) => e.type === 'approval.requested');
    const call = client.call('tools.call', { serviceId, toolName: 'output', arguments: {} });
    call.catch(() => undefined);
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unexpected event');
    const { result, workMs, otherMs } = await whileServed(async () => {
      await other.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
      return call;
    });
    // EVIL does not match the pattern: checked against the outputSchema (in linear time:
    // RE2), the structured content is left out with the reason, and the text kept, promptly.
    expect(result).toMatchObject({
      status: 'fulfilled',
      value: { text: 'structured', structuredContent: null, structuredOmitted: { reason: 'it does not match the tool\'s outputSchema: "/s" must match pattern "^(a+)+$"' } },
    });
    expect(workMs).toBeLessThan(5000);
    expect(otherMs).toBeLessThan(5000);
  });

  it.each([
    ['a backreference', 'backref', 'backreferences'],
    ['a lookahead', 'lookahead', '(?='],
    ['$refs that fan out to 10^8 evaluations', 'fanout', 'cost too much to check'],
    ['a $ref cycle on the same value', 'selfref', 'never moves on'],
  ])('a schema with %s (no checker could finish it) makes the service fail SCHEMA_INVALID, no fallback', async (_what, variant, why) => {
    await register(`redos-${variant}`, [variant]);
    const service = await activate(client, `redos-${variant}`);
    expect(service.connection).toMatchObject({ status: 'failed', code: 'SCHEMA_INVALID', message: expect.stringContaining('"match"') });
    expect(service.connection.status === 'failed' ? service.connection.message : '').toContain(why);
    expect((await client.call('tools.list', {})).tools.filter((t) => t.serviceName === `redos-${variant}`)).toEqual([]);
  });
});
