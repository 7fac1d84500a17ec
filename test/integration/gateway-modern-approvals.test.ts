import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { gatewayEnv, httpGateway, human, modelName as modelNameOf, rawGateway, type HttpGateway } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 36: `wispctl mcp serve --approve-in-client` offers a 2026-07-28 client its own calls'
 * approvals as `input_required` rounds (that revision has no server-to-client request): the
 * call's answer is the question, the client retries with its user's answer and the sealed
 * state, and the call runs, or not, on that answer, bound to what was shown. Seen by the
 * successor SDK's Client (which answers rounds through its elicitation handler), over stdio
 * and HTTP, and on the raw wire, where a client plays every wrong retry.
 */
const MODERN = '2026-07-28';
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let files: Service;
type Resolved = Extract<WispEvent, { type: 'approval.resolved' }>;
/** What the count tool answered last: each run adds one. */
let counted = 0;

const modelName = (tool: string): Promise<string> => modelNameOf(admin, files, tool);

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as { type: string; text?: string }[]).map((item) => (item.type === 'text' ? (item.text ?? '') : '')).join('\n');
}

type Answer = { action: 'accept'; content: { decision: string } } | { action: 'decline' | 'cancel' };

/** The successor SDK's Client, pinned to 2026-07-28, declaring form elicitation: each question it is asked is recorded and answered with `answer`. */
function approvingClient(name: string, answer: () => Answer): { client: Client; asked: string[] } {
  const client = new Client({ name, version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } });
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', (request) => {
    asked.push(request.params.message);
    return answer();
  });
  return { client, asked };
}

async function overStdio(name: string, answer: () => Answer): Promise<{ client: Client; asked: string[] }> {
  const made = approvingClient(name, answer);
  const transport = new StdioClientTransport({ command: process.execPath, args: [wispctlBin, '--socket', daemon.socket, 'mcp', 'serve', '--approve-in-client'], env: gatewayEnv(), stderr: 'pipe' });
  transport.stderr?.on('data', () => undefined);
  await made.client.connect(transport);
  return made;
}

const resolvedBy = (client: string) => (e: WispEvent) => e.type === 'approval.resolved' && JSON.stringify(e.approval.state).includes(`(mcp:${client})`);

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  // The human in Wisp answers nothing: each approval here is the client's to give.
  await human(await daemon.connect(), () => null);
  await registerScenario(admin, 'files', ['--call-tools']);
  files = await activate(admin, 'files');
  expect(files.connection.status).toBe('active');
});

afterAll(async () => {
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('--approve-in-client to a 2026-07-28 client over stdio', () => {
  it('asks the client as input_required; its approval runs the call, shown exactly and approved by that client', async () => {
    const { client, asked } = await overStdio('round-approver', () => ({ action: 'accept', content: { decision: 'approve' } }));
    try {
      const result = await client.callTool({ name: await modelName('count'), arguments: { note: 'asked in the client \u202e;txt.tac' } });
      expect(result.isError).not.toBe(true);
      counted = Number(text(result));
      expect(counted).toBeGreaterThan(0);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('Service: files');
      expect(asked[0]).toContain('Tool: "count"');
      // Escaped as wispctl shows it: the bidi override cannot make the question read other than what runs.
      expect(asked[0]).toContain('"note": "asked in the client \\u202e;txt.tac"');
      expect(asked[0]).not.toContain('\u202e');
      const resolved = (await log.waitFor(resolvedBy('round-approver'))) as Resolved;
      expect(resolved.approval.state).toMatchObject({ status: 'approved' });
    } finally {
      await client.close();
    }
  });

  it('denies the call when the client declines, and nothing runs', async () => {
    const { client, asked } = await overStdio('round-decliner', () => ({ action: 'decline' }));
    try {
      const result = await client.callTool({ name: await modelName('count'), arguments: { note: 'declined' } });
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('APPROVAL_DENIED');
      const resolved = (await log.waitFor(resolvedBy('round-decliner'))) as Resolved;
      expect(resolved.approval.state).toMatchObject({ status: 'denied' });
    } finally {
      await client.close();
    }
    // The tool did not run: the next call that is approved is its next count.
    const next = await overStdio('round-approver', () => ({ action: 'accept', content: { decision: 'approve' } }));
    try {
      expect(text(await next.client.callTool({ name: await modelName('count'), arguments: {} }))).toBe(String(counted + 1));
      counted += 1;
    } finally {
      await next.client.close();
    }
  });
});


const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-rounds', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
const approve = { 'wisp-approval': { action: 'accept', content: { decision: 'approve' } } };
type Round = { resultType: string; inputRequests: Record<string, { method: string; params: { message: string } }>; requestState: string };

describe('the rounds on the raw 2026-07-28 wire', () => {
  it('seals the state, refuses a forged or altered one, a retry with other arguments and a replay, and runs the call shown once', async () => {
    const raw = rawGateway(daemon.socket, ['--approve-in-client']);
    try {
      const name = await modelName('count');
      const args = { note: 'raw round' };
      const first = await raw.ask('tools/call', { name, arguments: args, _meta: envelope });
      const round = first.result as Round;
      expect(round).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
      expect(round.inputRequests['wisp-approval']).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('"note": "raw round"') } });
      const pending = (await admin.call('approvals.list', {})).approvals.filter((a: Approval) => a.summary.toolName === 'count' && a.state.status === 'pending');
      expect(pending).toHaveLength(1);

      // A state the gateway did not seal, or one altered by a byte: refused before any handler runs.
      for (const requestState of ['made-up', `${round.requestState.slice(0, -3)}${round.requestState.endsWith('AAA') ? 'BBB' : 'AAA'}`]) {
        const forged = await raw.ask('tools/call', { name, arguments: args, inputResponses: approve, requestState, _meta: envelope });
        expect(forged.error).toMatchObject({ code: -32602 });
      }
      // Other arguments than were shown: nothing is answered, the approval still waits.
      const other = await raw.ask('tools/call', { name, arguments: { note: 'something else' }, inputResponses: approve, requestState: round.requestState, _meta: envelope });
      expect(other.result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('APPROVAL_STALE') }] });
      expect((await admin.call('approvals.list', {})).approvals.find((a: Approval) => a.id === pending[0]?.id)?.state.status).toBe('pending');

      const before = counted;
      const ran = await raw.ask('tools/call', { name, arguments: args, inputResponses: approve, requestState: round.requestState, _meta: envelope });
      expect(ran.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: String(before + 1) }] });
      counted = before + 1;
      // Used once: the same state again runs nothing.
      const replay = await raw.ask('tools/call', { name, arguments: args, inputResponses: approve, requestState: round.requestState, _meta: envelope });
      expect(replay.result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('APPROVAL_NOT_PENDING') }] });
    } finally {
      raw.close();
    }
  });

  it('leaves an approval the client cancels to Wisp, and the retry waits for the answer given there', async () => {
    const raw = rawGateway(daemon.socket, ['--approve-in-client']);
    try {
      const name = await modelName('count');
      const first = (await raw.ask('tools/call', { name, arguments: {}, _meta: envelope })).result as Round;
      const pending = (await admin.call('approvals.list', {})).approvals.find((a: Approval) => a.summary.toolName === 'count' && a.state.status === 'pending');
      expect(pending).toBeDefined();
      const retry = raw.ask('tools/call', { name, arguments: {}, inputResponses: { 'wisp-approval': { action: 'cancel' } }, requestState: first.requestState, _meta: envelope });
      await admin.call('approvals.respond', { id: pending?.id ?? '', decision: 'approve' });
      expect((await retry).result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: String(counted + 1) }] });
      counted += 1;
    } finally {
      raw.close();
    }
  });
});

describe('a round its client leaves', () => {
  it('is cancelled at the daemon when the client goes away without retrying: nothing runs after', async () => {
    const raw = rawGateway(daemon.socket, ['--approve-in-client']);
    const name = await modelName('count');
    const requested = log.next((e) => e.type === 'approval.requested' && JSON.stringify(e.approval.summary.arguments) === JSON.stringify({ note: 'left' }));
    const first = (await raw.ask('tools/call', { name, arguments: { note: 'left' }, _meta: envelope })).result as Round;
    expect(first.resultType).toBe('input_required');
    const id = ((await requested) as Extract<WispEvent, { type: 'approval.requested' }>).approval.id;
    raw.close();
    const resolved = (await log.waitFor((e) => e.type === 'approval.resolved' && e.approval.id === id)) as Resolved;
    expect(resolved.approval.state.status).toBe('cancelled');
  });
});

describe('--approve-in-client to a 2026-07-28 client over --http (stateless: the retry is a request of its own)', () => {
  let served: HttpGateway;
  beforeAll(async () => {
    served = await httpGateway(daemon.socket, ['--approve-in-client']);
  });
  afterAll(async () => {
    await served.interrupt();
  });

  it('asks the client and runs the call on its approval', async () => {
    const { client, asked } = approvingClient('http-approver', () => ({ action: 'accept', content: { decision: 'approve' } }));
    await client.connect(new StreamableHTTPClientTransport(served.url, { requestInit: { headers: { Authorization: `Bearer ${served.token}` } } }));
    try {
      const requested = log.next((e) => e.type === 'approval.requested' && JSON.stringify(e.approval.summary.arguments) === JSON.stringify({ note: 'over http' }));
      const result = await client.callTool({ name: await modelName('count'), arguments: { note: 'over http' } });
      expect(text(result)).toBe(String(counted + 1));
      counted += 1;
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('"note": "over http"');
      const id = ((await requested) as Extract<WispEvent, { type: 'approval.requested' }>).approval.id;
      const resolved = (await log.waitFor((e) => e.type === 'approval.resolved' && e.approval.id === id)) as Resolved;
      expect(resolved.approval.state).toMatchObject({ status: 'approved', by: expect.stringMatching(/\(mcp:[\w.-]+\)$/) as unknown });
    } finally {
      await client.close();
    }
  });
});
