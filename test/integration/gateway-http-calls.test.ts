import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { makeCanary } from '../helpers/canary.js';
import { human, httpGateway, type HttpGateway } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { within } from '../helpers/wait.js';

/**
 * Issue 16 over `wispctl mcp serve --http`, with the official SDK Client over streamable HTTP:
 * a secret the server hands back is redacted, a client's notifications/cancelled cancels the
 * waiting approval, and with --approve-in-client a client that declares elicitation answers
 * its own call's approval (the first answer, there or on the socket, wins).
 */
const home = tempDir();
const SECRET = makeCanary();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let files: Service;
let plain: HttpGateway;
let eliciting: HttpGateway;
/** What the human at another socket connection answers; null: leaves it pending. */
let policy: (approval: Approval) => 'approve' | 'deny' | null = () => 'approve';
let adminId: string;

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;
type Resolved = Extract<WispEvent, { type: 'approval.resolved' }>;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

async function modelName(tool: string): Promise<string> {
  const found = (await admin.call('tools.list', { serviceId: files.id })).tools.find((t) => t.name === tool);
  if (found === undefined) throw new Error(`files has no tool ${tool}`);
  return found.modelName;
}

/** The next approval asked by the MCP client named `client` (client-N (mcp:NAME)). */
function nextAsked(client: string): Promise<Approval> {
  return log.next((e) => e.type === 'approval.requested' && e.approval.requester.clientId.endsWith(`(mcp:${client})`)).then((e) => (e as Requested).approval);
}

function resolvedOf(id: string): Promise<Resolved['approval']> {
  return log.waitFor((e) => e.type === 'approval.resolved' && e.approval.id === id).then((e) => (e as Resolved).approval);
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  adminId = (await admin.call('daemon.status')).you.clientId;
  await human(await daemon.connect(), (approval) => policy(approval));
  await registerScenario(admin, 'files', ['--call-tools', '--print-env']);
  await admin.call('services.setEnv', { name: 'files', mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  files = await activate(admin, 'files');
  expect(files.connection.status).toBe('active');
  [plain, eliciting] = await Promise.all([httpGateway(daemon.socket), httpGateway(daemon.socket, ['--approve-in-client'])]);
}, 60_000);

afterAll(async () => {
  plain.child.kill('SIGKILL');
  eliciting.child.kill('SIGKILL');
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve --http: results and cancellation', () => {
  it('redacts a secret the server hands back, in the content and the structured content', async () => {
    policy = () => 'approve';
    const client = await plain.connect('http-redacted');
    try {
      const result = await client.callTool({ name: await modelName('env-values'), arguments: {} });
      expect(result.isError).not.toBe(true);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(text(result)).toContain('[REDACTED:CANARY]');
      expect(JSON.stringify(result.structuredContent)).toContain('[REDACTED:CANARY]');
    } finally {
      await client.close();
    }
  });

  it('a notifications/cancelled from the client cancels the waiting approval; the tool never runs', async () => {
    policy = () => null;
    const client = await plain.connect('http-canceller');
    try {
      const name = await modelName('count');
      const asked = nextAsked('http-canceller');
      const controller = new AbortController();
      const call = client.callTool({ name, arguments: { note: 'never' } }, undefined, { signal: controller.signal });
      call.catch(() => undefined);
      const approval = await asked;
      expect(approval.state.status).toBe('pending');
      controller.abort('the user stopped it');
      await expect(call).rejects.toThrow();
      // Seen from another socket connection: the approval ended cancelled, and for this reason.
      expect((await resolvedOf(approval.id)).state).toMatchObject({ status: 'cancelled', reason: 'the MCP client cancelled the call' });
      expect(log.events.some((e) => e.type === 'tool.call.started' && e.call.approvalId === approval.id)).toBe(false);
      // The server never ran it: its first call, approved now, is its call number 1.
      policy = () => 'approve';
      expect(text(await client.callTool({ name, arguments: { note: 'once' } }))).toBe('1');
    } finally {
      policy = () => 'approve';
      await client.close();
    }
  });
});

describe('wispctl mcp serve --http --approve-in-client', () => {
  it('a client that declares elicitation approves its own call; a later answer on the socket is refused', async () => {
    policy = () => null;
    const asked: string[] = [];
    const client = await eliciting.connect('http-eliciting', {
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.push(request.params.message);
          return { action: 'accept', content: { decision: 'approve' } };
        }),
    });
    try {
      const approval = nextAsked('http-eliciting');
      const result = await client.callTool({ name: await modelName('echo'), arguments: { text: 'approved in the client, over http' } });
      expect(text(result)).toBe('approved in the client, over http');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('Service: files');
      expect(asked[0]).toContain('Tool: "echo"');
      expect(asked[0]).toContain('"text": "approved in the client, over http"');
      const { id } = await approval;
      expect((await resolvedOf(id)).state).toMatchObject({ status: 'approved', by: expect.stringMatching(/^client-\d+ \(mcp:http-eliciting\)$/) as unknown });
      await expect(admin.call('approvals.respond', { id, decision: 'deny' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    } finally {
      policy = () => 'approve';
      await client.close();
    }
  });

  it('when the approval is answered on the socket first, the elicitation is withdrawn and the session goes on', async () => {
    policy = () => null;
    const elicited: AbortSignal[] = [];
    let answerLate: () => void = () => undefined;
    const late = new Promise<void>((resolve) => (answerLate = resolve));
    const client = await eliciting.connect('http-slow-eliciting', {
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
          elicited.push(extra.signal);
          if (elicited.length > 1) return { action: 'accept', content: { decision: 'approve' } };
          // The person at the MCP client answers the first one only after Wisp's own client did.
          await late;
          return { action: 'accept', content: { decision: 'deny' } };
        }),
    });
    try {
      const name = await modelName('echo');
      const asked = nextAsked('http-slow-eliciting');
      const call = client.callTool({ name, arguments: { text: 'answered in wisp first' } });
      const approval = await asked;
      await admin.call('approvals.respond', { id: approval.id, decision: 'approve' });
      expect(text(await call)).toBe('answered in wisp first');
      expect((await resolvedOf(approval.id)).state).toMatchObject({ status: 'approved', by: adminId });
      // Withdrawn: the gateway sent notifications/cancelled for its elicitation, which aborted the client's handler.
      expect(elicited).toHaveLength(1);
      const [first] = elicited;
      const aborted = first === undefined || first.aborted ? Promise.resolve(true) : new Promise<boolean>((resolve) => first.addEventListener('abort', () => resolve(true), { once: true }));
      // The cancellation comes before the call's result; the wait's deadline only names the failure.
      expect(await within('the elicitation to be withdrawn (its handler aborted)', aborted)).toBe(true);
      answerLate();
      // The session goes on: the next call is approved by its own elicitation, and the late "deny" changed nothing.
      const next = nextAsked('http-slow-eliciting');
      expect(text(await client.callTool({ name, arguments: { text: 'and again' } }))).toBe('and again');
      expect(elicited).toHaveLength(2);
      expect((await resolvedOf((await next).id)).state).toMatchObject({ status: 'approved', by: expect.stringMatching(/^client-\d+ \(mcp:http-slow-eliciting\)$/) as unknown });
      // Approved in Wisp and used by the call it was for: nothing the client did later changed it.
      const listed = (await admin.call('approvals.list', { all: true })).approvals.find((a) => a.id === approval.id);
      expect(listed?.state).toMatchObject({ status: 'consumed', by: adminId });
    } finally {
      policy = () => 'approve';
      answerLate();
      await client.close();
    }
  });
});
