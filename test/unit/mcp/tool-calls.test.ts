import { describe, expect, it } from 'vitest';
import { Approvals, type ApprovalAnnouncement } from '../../../src/approvals/index.js';
import type { ToolCallResult } from '../../../src/core/index.js';
import type { McpEvent } from '../../../src/mcp/index.js';
import { Supervisor, ToolCalls, type CallRequest, type StoredService } from '../../../src/mcp/index.js';
import { Redactor } from '../../../src/secrets/index.js';
import { InMemoryServers, storedService, tool, toolServer, type ToolServer } from './in-memory.js';

const SECRET = 'sk-test-4f9a1c27e3';
const PNG = Buffer.alloc(300, 7).toString('base64');

/** The tools of the in-memory server: an echo with a schema, a picture, a tool that fails. */
function served(): ToolServer {
  return toolServer(
    [tool('echo', { text: { type: 'string' } }, ['text']), tool('picture'), tool('broken')],
    (name, args) => {
      if (name === 'picture') {
        return {
          content: [
            { type: 'text', text: `token ${SECRET} ${'x'.repeat(40_000)}` },
            { type: 'image', data: PNG, mimeType: 'image/png' },
          ],
        };
      }
      if (name === 'broken') return { content: [{ type: 'text', text: 'the disk is full' }], isError: true };
      return { content: [{ type: 'text', text: String(args.text) }] };
    },
  );
}

/** Real pieces end to end: a supervisor over an in-memory server, the approvals, the call pipeline. */
async function harness(): Promise<{
  calls: ToolCalls;
  approvals: Approvals;
  server: ToolServer;
  config: StoredService;
  announced: ApprovalAnnouncement[];
  emitted: McpEvent[];
  audit: Record<string, unknown>[];
  unwritable: Set<string>;
  start: (toolName: string, args: Record<string, unknown>, signal?: AbortSignal) => { result: Promise<ToolCallResult>; approvalId: Promise<string> };
}> {
  const server = served();
  const servers = new InMemoryServers().add('tools', () => server.server);
  const emitted: McpEvent[] = [];
  const audit: Record<string, unknown>[] = [];
  const unwritable = new Set<string>();
  const announced: ApprovalAnnouncement[] = [];
  const redactor = new Redactor();
  redactor.hold('test', 'API_TOKEN', SECRET);
  const supervisor = new Supervisor({
    version: '0.0.0-test',
    ladder: { stdinGraceMs: 1000, termGraceMs: 1000 },
    searchPath: undefined,
    publish: (event) => emitted.push(event),
    redact: (text) => redactor.redact(text),
    now: () => new Date(),
    transports: servers.factory,
  });
  const approvals = new Approvals((announcement) => announced.push(announcement));
  const calls = new ToolCalls({
    supervisor,
    approvals,
    publish: (event) => emitted.push(event),
    audit: (record) => {
      audit.push(record);
      // A record whose outcome the test names in `unwritable` cannot be written (a full disk).
      return Promise.resolve(!unwritable.has(String(record.outcome)));
    },
    redact: (value) => redactor.redactValue(value),
    now: () => new Date(),
  });
  const config = storedService('tools');
  expect(await supervisor.activate(config, 1, new AbortController().signal)).toMatchObject({ status: 'active', toolCount: 3 });
  const start = (toolName: string, args: Record<string, unknown>, signal = new AbortController().signal) => {
    let requested!: (id: string) => void;
    const approvalId = new Promise<string>((resolve) => (requested = resolve));
    const request: CallRequest = {
      serviceId: config.id,
      toolName,
      arguments: args,
      requester: { clientId: 'unit-test', sessionId: null, taskId: null },
      signal,
      onApprovalRequested: requested,
    };
    const result = calls.call(request);
    result.catch(() => undefined);
    return { result, approvalId };
  };
  return { calls, approvals, server, config, announced, emitted, audit, unwritable, start };
}

describe('ToolCalls (in-memory server, real approvals)', () => {
  it('waits for a human: nothing is sent before the approval, then the call runs once with the arguments shown', async () => {
    const h = await harness();
    const { result, approvalId } = h.start('echo', { text: 'hello' });
    const id = await approvalId;
    const asked = h.approvals.get(id);
    expect(asked.state.status).toBe('pending');
    expect(asked.summary).toMatchObject({ serviceName: 'tools', toolName: 'echo', arguments: { text: 'hello' } });
    expect(h.server.calls).toEqual([]);
    h.approvals.respond(id, 'approve', 'a human');
    expect(await result).toMatchObject({ approvalId: id, text: 'hello', truncated: false, content: [{ type: 'text', text: 'hello' }] });
    expect(h.server.calls).toEqual([{ name: 'echo', arguments: { text: 'hello' } }]);
    expect(h.approvals.get(id).state.status).toBe('consumed');
    expect(h.emitted.filter((e) => e.kind.startsWith('call.')).map((e) => e.kind)).toEqual(['call.started', 'call.finished']);
    expect(h.audit).toEqual([
      expect.objectContaining({ record: 'tool.call', approvalId: id, service: 'tools', tool: 'echo', outcome: 'started' }),
      expect.objectContaining({ record: 'tool.call', approvalId: id, service: 'tools', tool: 'echo', outcome: 'ok' }),
    ]);
  });

  it('is not sent when its record cannot be written: STORAGE_FAILED, and the approval is cancelled', async () => {
    const h = await harness();
    h.unwritable.add('started');
    const { result, approvalId } = h.start('echo', { text: 'unrecorded' });
    const id = await approvalId;
    h.approvals.respond(id, 'approve', 'a human');
    await expect(result).rejects.toMatchObject({ code: 'STORAGE_FAILED', message: expect.stringContaining('the call was not sent') });
    expect(h.server.calls).toEqual([]);
    expect(h.approvals.get(id).state).toMatchObject({ status: 'cancelled', reason: 'the audit log cannot be written' });
    expect(h.emitted.filter((e) => e.kind.startsWith('call.'))).toEqual([expect.objectContaining({ kind: 'call.failed', code: 'STORAGE_FAILED' })]);
  });

  it('is refused when denied: APPROVAL_DENIED, nothing sent, and it is on record', async () => {
    const h = await harness();
    const { result, approvalId } = h.start('echo', { text: 'no' });
    h.approvals.respond(await approvalId, 'deny', 'a human');
    await expect(result).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    expect(h.server.calls).toEqual([]);
    expect(h.audit).toEqual([expect.objectContaining({ approvalId: await approvalId, outcome: 'APPROVAL_DENIED' })]);
    expect(h.emitted.filter((e) => e.kind.startsWith('call.'))).toEqual([expect.objectContaining({ kind: 'call.failed', code: 'APPROVAL_DENIED' })]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a wrong type', { text: 5 }, '/text'],
    ['a missing required property', {}, '/'],
  ])('checks the arguments against the input schema before anyone is asked (%s)', async (_what, args, path) => {
    const h = await harness();
    await expect(h.start('echo', args).result).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS', details: { errors: [expect.objectContaining({ path })] } });
    expect(h.announced).toEqual([]);
    expect(h.server.calls).toEqual([]);
  });

  it('normalises the result: known secrets redacted, long text capped and flagged, an image only a marker', async () => {
    const h = await harness();
    const { result, approvalId } = h.start('picture', {});
    h.approvals.respond(await approvalId, 'approve', 'a human');
    const answer = await result;
    expect(answer.truncated).toBe(true);
    expect(answer.text).toHaveLength(32_000);
    expect(answer.originalLength).toBeGreaterThan(40_000);
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(answer.text.startsWith('token ')).toBe(true);
    expect(answer.content[1]).toEqual({ type: 'omitted', originalType: 'image', mimeType: 'image/png', bytes: 300, uri: null, name: null });
    expect(JSON.stringify(answer)).not.toContain(PNG);
  });

  it('ends TOOL_ERROR when the tool reports an error, carrying its result', async () => {
    const h = await harness();
    const { result, approvalId } = h.start('broken', {});
    h.approvals.respond(await approvalId, 'approve', 'a human');
    await expect(result).rejects.toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('the disk is full'), details: { result: { text: 'the disk is full' } } });
    expect(h.server.calls).toHaveLength(1);
  });

  it('cancels the approval when the caller goes away while it waits: CANCELLED, nothing sent', async () => {
    const h = await harness();
    const asker = new AbortController();
    const { result, approvalId } = h.start('echo', { text: 'gone' }, asker.signal);
    const id = await approvalId;
    asker.abort();
    await expect(result).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(h.approvals.get(id).state.status).toBe('cancelled');
    expect(h.server.calls).toEqual([]);
  });

  it('knows only active tools: TOOL_NOT_FOUND, nobody asked', async () => {
    const h = await harness();
    await expect(h.start('no-such-tool', {}).result).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(h.announced).toEqual([]);
  });
});
