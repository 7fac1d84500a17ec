import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import { EventLog, pidOf, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * A call's time limit while a human fills in its server's form: the limit (the service's
 * timeoutMs) is stopped while the request waits for the human and restarts in full once it
 * is answered; without that, a short limit would end the call (and close the connection)
 * under the user's fingers. A real daemon, the stdio elicitation fixture with a 5 s limit,
 * and the scenario fixture's `hang` tool with the same limit as the daemon's own clock: its
 * TIMEOUT, started after the request was put before the human, proves the limit has passed.
 */
// Also the limit for starting the fixtures (initialize, tools/list): long enough for a loaded machine.
const LIMIT_MS = 5000;
const home = tempDir();
const elicitServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs');
let daemon: RunningDaemon;
let caller: WispClient;
let human: WispClient;
let log: EventLog;
let asker: Service;
let sentinel: Service;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  caller = await daemon.connect();
  human = await daemon.connect();
  log = await EventLog.follow(human);
  human.onEvent((event) => {
    if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  const { service } = await caller.call('services.register', { name: 'asker', command: process.execPath, args: [elicitServer], timeoutMs: LIMIT_MS });
  ({ service: asker } = await caller.call('services.activate', { id: service.id, configVersion: service.configVersion }));
  const registered = await registerScenario(caller, 'sentinel', ['--call-tools'], { timeoutMs: LIMIT_MS });
  ({ service: sentinel } = await caller.call('services.activate', { id: registered.id, configVersion: registered.configVersion }));
});
afterAll(async () => {
  await caller.close();
  await human.close();
  killLeftovers();
  home.remove();
});

/** The asker, active again (a call that timed out or was cancelled closes the connection: the service is then failed). */
async function activeAsker(): Promise<void> {
  const { service } = await caller.call('services.get', { id: asker.id });
  if (service.connection.status !== 'active') ({ service: asker } = await caller.call('services.activate', { id: service.id, configVersion: service.configVersion }));
}

/**
 * Resolves once a call begun now on the sentinel has timed out: the limit has passed on the
 * daemon's clock for any call begun before (the same limit, its timer armed earlier).
 */
async function limitPassed(): Promise<void> {
  await expect(caller.call('tools.call', { serviceId: sentinel.id, toolName: 'hang', arguments: {} })).rejects.toMatchObject({ code: 'TIMEOUT' });
}

describe('a call whose server asks the human for input', () => {
  it('does not time out while the request waits for the human; answered after the limit, the server gets the content', async () => {
    const requested = log.next((e) => e.type === 'elicitation.requested');
    let settled = false;
    const call = caller.call('tools.call', { serviceId: asker.id, toolName: 'ask_form', arguments: {} }).finally(() => (settled = true));
    const { elicitation } = (await requested) as Extract<WispEvent, { type: 'elicitation.requested' }>;
    await limitPassed();
    expect(settled).toBe(false);
    expect((await human.call('elicitations.list')).elicitations).toEqual([expect.objectContaining({ id: elicitation.id, status: 'pending' })]);
    await human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { name: 'Ada' } });
    const result = await call;
    expect(JSON.parse(result.text)).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, plan: 'free' } });
    // The connection stayed up: the service is active on the same process.
    expect(pidOf((await caller.call('services.get', { id: asker.id })).service)).toBe(pidOf(asker));
  }, 30_000);

  it('still ends when the caller goes away: the request ends cancelled with its call', async () => {
    await activeAsker();
    const leaving = await daemon.connect();
    const requested = log.next((e) => e.type === 'elicitation.requested');
    void leaving.call('tools.call', { serviceId: asker.id, toolName: 'ask_form', arguments: {} }).catch(() => undefined);
    const { elicitation } = (await requested) as Extract<WispEvent, { type: 'elicitation.requested' }>;
    const resolved = log.next((e) => e.type === 'elicitation.resolved');
    await leaving.close();
    expect(await resolved).toMatchObject({ elicitation: { id: elicitation.id, status: 'cancelled', reason: expect.stringContaining('the call that caused it ended') } });
  });

  it('once answered, the limit runs again in full: a server that then never answers times out, and the request stays answered', async () => {
    await activeAsker();
    const requested = log.next((e) => e.type === 'elicitation.requested');
    const call = caller.call('tools.call', { serviceId: asker.id, toolName: 'ask_then_hang', arguments: {} });
    const { elicitation } = (await requested) as Extract<WispEvent, { type: 'elicitation.requested' }>;
    await human.call('elicitations.respond', { id: elicitation.id, action: 'decline' });
    await expect(call).rejects.toMatchObject({ code: 'TIMEOUT', message: expect.stringContaining(`within ${LIMIT_MS} ms`) });
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'cancel' })).rejects.toMatchObject({ code: 'ELICITATION_NOT_PENDING', details: { status: 'declined' } });
  });
});
