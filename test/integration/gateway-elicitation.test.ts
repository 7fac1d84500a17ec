import path from 'node:path';
import { ElicitRequestSchema, type CallToolResult, type ClientCapabilities, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { human, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { until } from '../helpers/wait.js';
import { killLeftovers, repoRoot, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35: an upstream server's elicitation/create during a call reaches the gateway's MCP
 * client (the official SDK Client over stdio), labelled as the server's, when the client
 * declared elicitation; the first answer wins, here or in a Wisp UI (elicitations.respond on
 * the socket). Real daemon, real fixture server (scenario-server --conformance-tools: the
 * conformance suite's test_elicitation, which asks for a username and an email and answers
 * with what came back). A human at another connection approves every call.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;

type Requested = Extract<WispEvent, { type: 'elicitation.requested' }>;
type Resolved = Extract<WispEvent, { type: 'elicitation.resolved' }>;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

/** What the client's elicitation handler saw: each request, and whether the gateway withdrew it (notifications/cancelled aborts the handler's signal). */
interface Asked {
  readonly requests: ElicitRequest['params'][];
  withdrawn: number;
}

/** A gateway client (own names: `--service SERVICE`, asker by default) that declares elicitation (form mode unless `capability` says) and answers each request with `answer` (null: never, until withdrawn). */
async function elicitingClient(
  name: string,
  answer: (params: ElicitRequest['params']) => ElicitResult | null,
  { service = 'asker', capability = {} }: { service?: string; capability?: NonNullable<ClientCapabilities['elicitation']> } = {},
): Promise<{ gateway: GatewayClient; asked: Asked }> {
  const asked: Asked = { requests: [], withdrawn: 0 };
  const gateway = await stdioGateway(daemon.socket, ['--service', service], {
    name,
    capabilities: { elicitation: capability },
    setup: (client) =>
      client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
        asked.requests.push(request.params);
        const now = answer(request.params);
        if (now !== null) return now;
        return new Promise<ElicitResult>((resolve) =>
          extra.signal.addEventListener('abort', () => {
            asked.withdrawn += 1;
            resolve({ action: 'cancel' });
          }),
        );
      }),
  });
  return { gateway, asked };
}

beforeAll(async () => {
  daemon = await startWispd(home.path);
  admin = await daemon.connect();
  // The Wisp UI: it sees every elicitation (and so the daemon puts them before a human).
  log = await EventLog.follow(admin);
  await registerScenario(admin, 'asker', ['--conformance-tools']);
  await activate(admin, 'asker');
  // A server that asks in URL mode too (ask_url: open https://consent.example.com/sign?id=42).
  await admin.call('services.register', { name: 'consent', command: process.execPath, args: [path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs')] });
  await activate(admin, 'consent');
  await human(await daemon.connect(), () => 'approve');
}, 60_000);

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('a server\'s elicitation through wispctl mcp serve', () => {
  it('reaches a client that declared elicitation, labelled as the server\'s; its answer reaches the server, and Wisp sees it answered', async () => {
    const { gateway, asked } = await elicitingClient('form client', (params): ElicitResult => {
      if (params.message.includes('decline')) return { action: 'decline' };
      // Without the required email: the daemon refuses the content, and the server hears cancel.
      if (params.message.includes('half')) return { action: 'accept', content: { username: 'ada' } };
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    try {
      const result = await gateway.client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      expect((result as CallToolResult).isError).toBeFalsy();
      expect(text(result)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
      expect(asked.requests).toHaveLength(1);
      const params = asked.requests[0];
      expect(params?.message).toBe('[from server asker] Who are you?');
      // The schema as the server asked, passed through.
      expect(params !== undefined && 'requestedSchema' in params ? params.requestedSchema : null).toEqual({
        type: 'object',
        properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
        required: ['username', 'email'],
      });
      const resolved = (await log.waitFor((e) => e.type === 'elicitation.resolved' && e.elicitation.status === 'accepted')) as Resolved;
      expect(resolved.elicitation.by).toMatch(/^client-\d+ \(mcp:form-client\)$/);
      // A decline maps to decline.
      const declined = await gateway.client.callTool({ name: 'test_elicitation', arguments: { message: 'Please decline' } });
      expect(text(declined)).toBe('User response: action=decline, content={}');
      const half = await gateway.client.callTool({ name: 'test_elicitation', arguments: { message: 'Answer half of it' } });
      expect(text(half)).toBe('User response: action=cancel, content={}');
      const cancelled = (await log.waitFor((e) => e.type === 'elicitation.resolved' && e.elicitation.message === 'Answer half of it')) as Resolved;
      expect(cancelled.elicitation).toMatchObject({ status: 'cancelled', by: expect.stringMatching(/\(mcp:form-client\)$/) as unknown });
      expect(asked.withdrawn).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  it('is withdrawn from the client when a Wisp UI answers first; the Wisp answer reaches the server', async () => {
    const { gateway, asked } = await elicitingClient('slow client', () => null);
    try {
      const call = gateway.client.callTool({ name: 'test_elicitation', arguments: { message: 'Wisp answers this one' } });
      const requested = (await log.waitFor((e) => e.type === 'elicitation.requested' && e.elicitation.message === 'Wisp answers this one')) as Requested;
      // Both are asked: the client (its request open) and Wisp's UIs.
      await until('the client is asked', () => asked.requests.length, (n) => n === 1);
      await admin.call('elicitations.respond', { id: requested.elicitation.id, action: 'accept', content: { username: 'wisp', email: 'wisp@example.com' } });
      expect(text(await call)).toBe('User response: action=accept, content={"username":"wisp","email":"wisp@example.com"}');
      await until('the client\'s request is withdrawn', () => asked.withdrawn, (n) => n === 1);
      const resolved = (await log.waitFor((e) => e.type === 'elicitation.resolved' && e.elicitation.id === requested.elicitation.id)) as Resolved;
      expect(resolved.elicitation).toMatchObject({ status: 'accepted', by: expect.stringMatching(/^client-\d+$/) as unknown });
    } finally {
      await gateway.close();
    }
  });

  it('does not reach a client without the capability, nor another client\'s gateway; Wisp\'s UIs still answer', async () => {
    const plain = await stdioGateway(daemon.socket, ['--service', 'asker'], { name: 'plain client' });
    const { gateway: other, asked } = await elicitingClient('bystander', () => ({ action: 'accept', content: { username: 'wrong', email: 'wrong@example.com' } }));
    try {
      // The bystander is initialized and following before the call starts.
      await other.client.listTools();
      const call = plain.client.callTool({ name: 'test_elicitation', arguments: { message: 'Only Wisp sees this' } });
      const requested = (await log.waitFor((e) => e.type === 'elicitation.requested' && e.elicitation.message === 'Only Wisp sees this')) as Requested;
      expect(requested.elicitation.owners).toEqual([{ clientId: expect.stringMatching(/^client-\d+ \(mcp:plain-client\)$/) as unknown, sessionId: null, taskId: null }]);
      await admin.call('elicitations.respond', { id: requested.elicitation.id, action: 'accept', content: { username: 'wisp', email: 'wisp@example.com' } });
      expect(text(await call)).toBe('User response: action=accept, content={"username":"wisp","email":"wisp@example.com"}');
      expect(asked.requests).toEqual([]);
    } finally {
      await Promise.all([plain.close(), other.close()]);
    }
  });

  it('in URL mode reaches a client that declared elicitation.url, with the URL; a form-only client is not asked', async () => {
    const { gateway, asked } = await elicitingClient('url client', () => ({ action: 'accept' }), { service: 'consent', capability: { form: {}, url: {} } });
    const { gateway: formOnly, asked: notAsked } = await elicitingClient('form only', () => ({ action: 'decline' }), { service: 'consent' });
    try {
      const result = await gateway.client.callTool({ name: 'ask_url', arguments: {} });
      expect(text(result)).toBe('{"action":"accept","content":null}');
      const params = asked.requests[0];
      expect(params).toMatchObject({ mode: 'url', url: 'https://consent.example.com/sign?id=42' });
      expect(params?.message.startsWith('[from server consent] Please sign the')).toBe(true);
      const requested = (await log.waitFor((e) => e.type === 'elicitation.requested' && e.elicitation.mode === 'url')) as Requested;
      expect(params !== undefined && 'elicitationId' in params ? params.elicitationId : null).toBe(requested.elicitation.id);
      // A client that declared form mode only: the URL request stays with Wisp's UIs.
      const call = formOnly.client.callTool({ name: 'ask_url', arguments: {} });
      const second = (await log.waitFor((e) => e.type === 'elicitation.requested' && e.elicitation.mode === 'url' && e.elicitation.id !== requested.elicitation.id)) as Requested;
      await admin.call('elicitations.respond', { id: second.elicitation.id, action: 'accept' });
      expect(text(await call)).toBe('{"action":"accept","content":null}');
      expect(notAsked.requests).toEqual([]);
    } finally {
      await Promise.all([gateway.close(), formOnly.close()]);
    }
  });

  it('is answered cancel at once when only a gateway whose client cannot answer it is attached', async () => {
    await admin.call('events.unsubscribe');
    const plain = await stdioGateway(daemon.socket, ['--service', 'asker'], { name: 'plain again' });
    const { gateway: other, asked } = await elicitingClient('bystander again', () => ({ action: 'accept', content: { username: 'wrong', email: 'wrong@example.com' } }));
    try {
      await other.client.listTools();
      const result = await plain.client.callTool({ name: 'test_elicitation', arguments: { message: 'Nobody can answer this' } });
      expect(text(result)).toBe('User response: action=cancel, content={}');
      expect(asked.requests).toEqual([]);
    } finally {
      await Promise.all([plain.close(), other.close()]);
      await admin.call('events.subscribe', {});
    }
  });
});

