import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { LIMITS, WispError, type WispEvent } from '../../src/core/index.js';
import { httpGateway, stdioGateway, type GatewayClient, type HttpGateway } from '../helpers/gateway.js';
import { activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { shown, until } from '../helpers/wait.js';

/**
 * Issue 33, LOW 8: one gateway client filled the daemon-wide cap on waiting calls (17 HTTP
 * sessions x 64 = 1,024), and the user's own calls got LIMIT_EXCEEDED. Real gateway
 * processes (`wispctl mcp serve --http` with 17 SDK sessions, and stdio gateways), a real
 * daemon; nobody answers the approvals, so every accepted call waits. What is counted is what
 * the human would see: the approvals asked, by whom.
 */

const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let echo: string;
const asked: { clientId: string }[] = [];
const http: HttpGateway[] = [];
const stdio: GatewayClient[] = [];
const clients: WispClient[] = [];

beforeAll(async () => {
  daemon = await startWispd(home.path);
  admin = await daemon.connect();
  admin.onEvent((event: WispEvent) => {
    if (event.type === 'approval.requested') asked.push({ clientId: event.approval.requester.clientId });
  });
  await admin.call('events.subscribe', { types: ['approval.requested'] });
  const service = await registerScenario(admin, 'echo');
  expect((await activate(admin, 'echo')).connection.status).toBe('active');
  const tool = (await admin.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'echo');
  echo = tool?.modelName ?? '';
}, 60_000);

afterAll(async () => {
  await Promise.all(stdio.map((g) => g.close().catch(() => undefined)));
  for (const g of http) g.child.kill('SIGKILL');
  for (const c of clients) await c.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** Approvals asked so far by connections whose client id ends with `(mcp:PREFIX...)`, or by exactly `clientId`. */
function askedBy(match: string): number {
  return asked.filter((a) => a.clientId === match || a.clientId.includes(`(mcp:${match}`)).length;
}

/** Waits until `done` holds (a condition, not a timing); fails, naming `what`, if it never does. */
async function untilHolds(what: string, done: () => boolean): Promise<void> {
  await until(what, done, Boolean, { show: () => `asked ${asked.length}: ${shown(asked.slice(-3).map((a) => a.clientId))}` });
}

/** What a tool call through a gateway ended as: its error text, or 'ok'. Calls still waiting stay pending. */
function gatewayCall(client: Client, n: string, settled: string[]): void {
  void client.callTool({ name: echo, arguments: { text: n } }, undefined, { timeout: 600_000 }).then(
    (result) => settled.push(result.isError === true ? (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('') : 'ok'),
    (error: unknown) => settled.push(`threw: ${String(error)}`),
  );
}

/** The user's own socket calls, as wispctl makes them: refusals are collected, accepted ones wait. */
function ownCalls(client: WispClient, count: number, refused: string[]): void {
  for (let i = 0; i < count; i++) {
    client.call('tools.call', { modelName: echo, arguments: { text: `own ${i}` } }).catch((error: unknown) => refused.push(error instanceof WispError ? `${error.code}:${String(error.details.limit)}` : String(error)));
  }
}

describe('gateways count as one client, and the user keeps a reserve', () => {
  it('one HTTP gateway\'s 17 sessions get 64 waiting calls together, and the user\'s own 64 calls are still taken', async () => {
    const gateway = await httpGateway(daemon.socket);
    http.push(gateway);
    const sessions = await Promise.all(Array.from({ length: 17 }, (_, i) => gateway.connect(`flood-${i}`)));
    const settled: string[] = [];
    sessions.forEach((session, s) => {
      for (let i = 0; i < LIMITS.maxPendingCallsPerClient; i++) gatewayCall(session, `${s}:${i}`, settled);
    });
    const sent = 17 * LIMITS.maxPendingCallsPerClient;
    await untilHolds('askedBy(\'flood-\') + settled.length === sent', () => askedBy('flood-') + settled.length === sent);
    expect(askedBy('flood-')).toBe(LIMITS.maxPendingCallsPerClient);
    expect(settled).toHaveLength(sent - LIMITS.maxPendingCallsPerClient);
    expect(new Set(settled)).toEqual(new Set([`LIMIT_EXCEEDED: this gateway already has ${LIMITS.maxPendingCallsPerClient} calls waiting for an answer (its sessions count as one client); wait for some to finish`]));
    // Each session is still its own client in approvals, named after its MCP client.
    for (const a of asked) expect(a.clientId).toMatch(/^client-\d+ \(mcp:flood-\d+\)$/);

    const mine = await daemon.connect();
    clients.push(mine);
    const me = (await mine.call('daemon.status')).you.clientId;
    const refused: string[] = [];
    ownCalls(mine, LIMITS.maxPendingCallsPerClient, refused);
    await untilHolds('askedBy(me) + refused.length === LIMITS.maxPendingCallsPerClient', () => askedBy(me) + refused.length === LIMITS.maxPendingCallsPerClient);
    expect(refused).toEqual([]);
    expect((await admin.call('daemon.status')).load).toMatchObject({ gateways: 1, gatewayConnections: 17, gatewayPendingCalls: 64, pendingCalls: 128 });
  }, 120_000);

  it('every gateway together gets 512 waiting calls; the next gateway\'s call is refused, and the user\'s next client is still taken', async () => {
    // 64 already wait for the HTTP gateway: seven stdio gateways take the other 448 of the gateways' 512.
    const seven = await Promise.all(Array.from({ length: 7 }, (_, i) => stdioGateway(daemon.socket, [], { name: `stdio-${i}` })));
    stdio.push(...seven);
    const settled: string[] = [];
    seven.forEach((g, s) => {
      for (let i = 0; i < LIMITS.maxPendingCallsPerClient; i++) gatewayCall(g.client, `stdio ${s}:${i}`, settled);
    });
    await untilHolds('askedBy(\'stdio-\') + settled.length === 7 * LIMITS.maxPendingCallsPerClient', () => askedBy('stdio-') + settled.length === 7 * LIMITS.maxPendingCallsPerClient);
    expect(settled).toEqual([]);
    expect((await admin.call('daemon.status')).load).toMatchObject({ gateways: 8, gatewayPendingCalls: LIMITS.maxGatewayPendingCalls });

    const eighth = await stdioGateway(daemon.socket, [], { name: 'eighth' });
    stdio.push(eighth);
    const late: string[] = [];
    gatewayCall(eighth.client, 'eighth', late);
    await untilHolds('late.length === 1', () => late.length === 1);
    expect(late).toEqual([`LIMIT_EXCEEDED: MCP gateways together already have ${LIMITS.maxGatewayPendingCalls} calls waiting for an answer (the rest is kept for your own clients); try again later`]);

    const next = await daemon.connect();
    clients.push(next);
    const me = (await next.call('daemon.status')).you.clientId;
    const refused: string[] = [];
    ownCalls(next, LIMITS.maxPendingCallsPerClient, refused);
    await untilHolds('askedBy(me) + refused.length === LIMITS.maxPendingCallsPerClient', () => askedBy(me) + refused.length === LIMITS.maxPendingCallsPerClient);
    expect(refused).toEqual([]);
    const load = (await admin.call('daemon.status')).load;
    expect(load).toMatchObject({ gatewayPendingCalls: 512, pendingCalls: 512 + 2 * LIMITS.maxPendingCallsPerClient });
    // The daemon never tells anyone a gateway's id.
    expect(JSON.stringify(await next.call('daemon.status'))).not.toMatch(/"gateway"/);
  }, 120_000);

  it('a socket client may name a gateway: a bad id or a second one is refused, the id is never echoed, and its calls share the gateways\' cap', async () => {
    const c = await daemon.connect();
    clients.push(c);
    await expect(c.call('client.identify', { gateway: 'short' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(c.call('client.identify', {})).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    const id = 'A'.repeat(22);
    const { clientId } = await c.call('client.identify', { gateway: id, name: 'script' });
    expect(clientId).not.toContain(id);
    await expect(c.call('client.identify', { gateway: 'B'.repeat(22) })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    // Named once, joined once: a name may still come later for a connection that only joined.
    const d = await daemon.connect();
    clients.push(d);
    await d.call('client.identify', { gateway: 'C'.repeat(22) });
    expect((await d.call('client.identify', { name: 'later' })).clientId).toMatch(/\(later\)$/);
    // With the gateways' share full, its calls are refused like any gateway's.
    await expect(c.call('tools.call', { modelName: echo, arguments: { text: 'x' } })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxGatewayPendingCalls' } });
  });
});
