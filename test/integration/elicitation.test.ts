import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Elicitation, Service, WispEvent } from '../../src/core/index.js';
import { EventLog } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/** Servers asking the user for input: a real stdio fixture, a real daemon, a caller and a second (human) client that answers. */
const home = tempDir();
const elicitServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs');
const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
let daemon: RunningDaemon;
let caller: WispClient;
let human: WispClient;
let humanLog: EventLog;
let service: Service;

beforeAll(async () => {
  daemon = await startWispd(home.path);
  caller = await daemon.connect();
  human = await daemon.connect();
  human.onEvent((event) => {
    if (event.type === 'approval.requested') void human.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  humanLog = await EventLog.follow(human);
  ({ service } = await caller.call('services.register', { name: 'asker', command: process.execPath, args: [elicitServer] }));
  ({ service } = await caller.call('services.activate', { id: service.id, configVersion: service.configVersion }));
});
afterAll(async () => {
  await caller.close();
  await human.close();
  killLeftovers();
  home.remove();
});

const requested = (log: EventLog) => log.next((e) => e.type === 'elicitation.requested') as Promise<Extract<WispEvent, { type: 'elicitation.requested' }>>;
const ask = (client: WispClient, tool: string) => client.call('tools.call', { serviceId: service.id, toolName: tool, arguments: {} });
const answer = (text: string) => JSON.parse(text) as { action: string; content: Record<string, unknown> | null; capability?: boolean };

describe('elicitation', () => {
  it('puts a form request before the attached clients, and a second client answers it; omitted fields get their defaults', async () => {
    const asked = requested(humanLog);
    const call = ask(caller, 'ask_form');
    const { elicitation } = await asked;
    expect(elicitation).toMatchObject({ service: { id: service.id, name: 'asker' }, mode: 'form', message: 'Who are you?\nReally.', url: null, status: 'pending', owners: [{ sessionId: null, taskId: null }] });
    expect(elicitation.requestedSchema).toMatchObject({ required: ['name'] });
    expect((await human.call('elicitations.list')).elicitations.map((e) => e.id)).toEqual([elicitation.id]);
    const resolved = humanLog.next((e) => e.type === 'elicitation.resolved');
    const { elicitation: done } = await human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { name: 'Ada' } });
    expect(done).toMatchObject({ status: 'accepted', by: expect.stringMatching(/^client-\d+$/) });
    expect(answer((await call).text)).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, plan: 'free' } });
    expect(await resolved).toMatchObject({ elicitation: { id: elicitation.id, status: 'accepted' } });
    expect(JSON.stringify(await resolved)).not.toContain('Ada');
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'decline' })).rejects.toMatchObject({ code: 'ELICITATION_NOT_PENDING' });
  });

  it('refuses content that violates the requested schema (nothing is sent), then passes on a decline', async () => {
    const asked = requested(humanLog);
    const call = ask(caller, 'ask_form');
    const { elicitation } = await asked;
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { name: 'A', age: 'old' } })).rejects.toMatchObject({
      code: 'ELICITATION_INVALID',
      details: { errors: expect.arrayContaining([{ path: '/name', message: expect.stringContaining('fewer than 2') }, { path: '/age', message: 'must be integer' }]) },
    });
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { name: { nested: true } } })).rejects.toMatchObject({ code: 'ELICITATION_INVALID' });
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'decline', content: { name: 'Ada' } })).rejects.toMatchObject({ code: 'ELICITATION_INVALID' });
    expect((await human.call('elicitations.list')).elicitations.map((e) => e.status)).toEqual(['pending']);
    await human.call('elicitations.respond', { id: elicitation.id, action: 'decline' });
    expect(answer((await call).text)).toEqual({ action: 'decline', content: null });
  });

  it('passes on a cancel', async () => {
    const asked = requested(humanLog);
    const call = ask(caller, 'ask_form');
    const { elicitation } = await asked;
    await human.call('elicitations.respond', { id: elicitation.id, action: 'cancel' });
    expect(answer((await call).text)).toEqual({ action: 'cancel', content: null });
  });

  it('shows a URL-mode request with its full URL and host, accepted without content', async () => {
    const asked = requested(humanLog);
    const call = ask(caller, 'ask_url');
    const { elicitation } = await asked;
    expect(elicitation).toMatchObject({ mode: 'url', url: 'https://consent.example.com/sign?id=42', host: 'consent.example.com', requestedSchema: null });
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { x: 'y' } })).rejects.toMatchObject({ code: 'ELICITATION_INVALID' });
    await human.call('elicitations.respond', { id: elicitation.id, action: 'accept' });
    expect(answer((await call).text)).toEqual({ action: 'accept', content: null });
  });

  it('keeps at most 8 of one service open: the rest of a burst are answered cancel at once, and another service can still ask', async () => {
    const shown: Elicitation[] = [];
    const eight = humanLog.next((e) => {
      if (e.type === 'elicitation.requested' && e.elicitation.service.id === service.id) shown.push(e.elicitation);
      return shown.length === 8;
    });
    const call = caller.call('tools.call', { serviceId: service.id, toolName: 'ask_many', arguments: { count: 20 } });
    await eight;
    expect((await human.call('elicitations.list')).elicitations.map((e) => e.id).sort()).toEqual(shown.map((e) => e.id).sort());
    // Another server's question still reaches the human.
    const { service: other } = await caller.call('services.register', { name: 'asker-2', command: process.execPath, args: [elicitServer] });
    await caller.call('services.activate', { id: other.id, configVersion: other.configVersion });
    const asked = requested(humanLog);
    const otherCall = caller.call('tools.call', { serviceId: other.id, toolName: 'ask_form', arguments: {} });
    const { elicitation } = await asked;
    expect(elicitation.service.name).toBe('asker-2');
    await human.call('elicitations.respond', { id: elicitation.id, action: 'decline' });
    expect(answer((await otherCall).text)).toEqual({ action: 'decline', content: null });
    for (const open of shown) await human.call('elicitations.respond', { id: open.id, action: 'decline' });
    expect(JSON.parse((await call).text)).toEqual({ cancel: 12, decline: 8 });
  });

  it('ends a request that outlives its call as cancelled', async () => {
    const leaving = await daemon.connect();
    const asked = requested(humanLog);
    void ask(leaving, 'ask_form').catch(() => undefined);
    const { elicitation } = await asked;
    const resolved = humanLog.next((e) => e.type === 'elicitation.resolved');
    // The caller goes away: its call is cancelled, and the request with it.
    await leaving.close();
    const end = (await resolved) as Extract<WispEvent, { type: 'elicitation.resolved' }>;
    expect(end.elicitation).toMatchObject({ id: elicitation.id, status: 'cancelled', by: null, reason: expect.stringContaining('the call that caused it ended') });
    await expect(human.call('elicitations.respond', { id: elicitation.id, action: 'accept', content: { name: 'Late' } })).rejects.toMatchObject({ code: 'ELICITATION_NOT_PENDING', details: { status: 'cancelled' } });
    expect((await human.call('elicitations.list')).elicitations).toEqual([]);
  });

  it('declares the capability whether or not a client that can answer is attached; with none, a request is answered cancel at once', async () => {
    // The human unsubscribes: no attached client receives elicitation.requested.
    await human.call('events.unsubscribe');
    const { service: config } = await caller.call('services.register', { name: 'asker-alone', command: process.execPath, args: [elicitServer] });
    const { service: alone } = await caller.call('services.activate', { id: config.id, configVersion: config.configVersion });
    const asked: Elicitation[] = [];
    caller.onEvent((e) => (e.type === 'elicitation.requested' ? asked.push(e.elicitation) : undefined));
    // Approvals come to the human's handler only while it is subscribed: answer this one from the caller.
    await caller.call('events.subscribe', { types: ['approval.requested'] });
    caller.onEvent((e) => (e.type === 'approval.requested' ? void caller.call('approvals.respond', { id: e.approval.id, decision: 'approve' }) : undefined));
    const result = await caller.call('tools.call', { serviceId: alone.id, toolName: 'ask_form', arguments: {} });
    expect(answer(result.text)).toEqual({ action: 'cancel', content: null });
    expect(asked).toEqual([]);
  });

  it('offers the same tools whether or not a UI was attached at activation, so none is held when one attaches later (server-everything: 13 or 15)', async () => {
    // Still unsubscribed (above): nobody could answer an elicitation now.
    const { service: config } = await caller.call('services.register', { name: 'by-capability', command: process.execPath, args: [hostileServer, 'capability-tools'] });
    const { service: first } = await caller.call('services.activate', { id: config.id, configVersion: config.configVersion });
    expect(first.connection.status).toBe('active');
    const names = async () => (await caller.call('tools.list', { serviceId: config.id })).tools.map((t) => `${t.name}:${t.pin}`).sort();
    expect(await names()).toEqual(['ask-user:trusted', 'plain:trusted']);
    // A UI attaches; the service is restarted: the same tools, none held for review.
    await human.call('events.subscribe', {});
    await caller.call('services.disable', { id: config.id });
    const { service: again } = await caller.call('services.get', { id: config.id });
    await caller.call('services.activate', { id: again.id, configVersion: again.configVersion });
    expect(await names()).toEqual(['ask-user:trusted', 'plain:trusted']);
  });
});
