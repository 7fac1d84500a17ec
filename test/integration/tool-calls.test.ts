import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, WispEvent } from '../../src/core/index.js';
import { activate, EventLog, pidOf, registerScenario } from '../helpers/services.js';
import { daemonEnv, isRunning, killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

const home = tempDir();
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let humanLog: EventLog;
let askerLog: EventLog;
let serviceId: string;

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  asker = await daemon.connect();
  human = await daemon.connect();
  askerLog = await EventLog.follow(asker);
  humanLog = await EventLog.follow(human);
  // Signalled from outside (list_changed on SIGUSR2): its own pid is the listed one only unsandboxed.
  serviceId = (await registerScenario(asker, 'tools', ['--call-tools'], { sandbox: NO_SANDBOX })).id;
  await activate(asker, 'tools');
});

afterAll(async () => {
  await asker.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

const requested = (log: EventLog) => log.next((e) => e.type === 'approval.requested') as Promise<Extract<WispEvent, { type: 'approval.requested' }>>;
// Every test awaits the call it makes, but a call can fail (denied, tool error) before
// the approvals.respond that caused it has answered; marking the promise handled here
// keeps that ordering from counting as an unhandled rejection.
function call(toolName: string, args: Record<string, unknown> = {}, client: WispClient = asker) {
  const pending = client.call('tools.call', { serviceId, toolName, arguments: args });
  pending.catch(() => undefined);
  return pending;
}

/** Starts a call and answers its approval from the other client. */
async function callApproved(toolName: string, args: Record<string, unknown> = {}) {
  const asked = requested(humanLog);
  const result = call(toolName, args);
  const { approval } = await asked;
  await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
  return result;
}

async function countCalls(): Promise<number> {
  const matches = (await asker.call('services.logs', { id: serviceId })).stderr.match(/count called (\d+) times/g) ?? [];
  return matches.length;
}

describe('tool calls with approvals', () => {
  it('waits for an approval that any client may give, then runs once with exactly those arguments', async () => {
    const askerSees = requested(askerLog);
    const asked = requested(humanLog);
    const pending = call('echo', { text: 'canary-argument-value' });
    const { approval } = await asked;
    expect(approval).toMatchObject({
      kind: 'tool_call',
      state: { status: 'pending' },
      summary: { serviceName: 'tools', toolName: 'echo', arguments: { text: 'canary-argument-value' }, annotations: { readOnlyHint: true } },
      binding: { serviceId, generation: 1, toolListVersion: 1, toolName: 'echo' },
    });
    expect((await askerSees).approval.id).toBe(approval.id);
    expect((await human.call('approvals.list')).approvals.map((a) => a.id)).toContain(approval.id);

    const resolvedForAsker = askerLog.next((e) => e.type === 'approval.resolved');
    await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
    const result = await pending;
    expect(result).toMatchObject({ approvalId: approval.id, text: 'canary-argument-value', truncated: false, content: [{ type: 'text', text: 'canary-argument-value' }] });
    const resolved = await resolvedForAsker;
    expect(resolved).toMatchObject({ approval: { id: approval.id, kind: 'tool_call', binding: approval.binding, state: { status: 'approved' } } });
    // What was shown came once, with approval.requested: the outcome does not repeat the arguments.
    expect(JSON.stringify(resolved)).not.toContain('canary-argument-value');

    // The first answer won; a later one is refused, and the approval cannot be used again.
    await expect(asker.call('approvals.respond', { id: approval.id, decision: 'deny' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    expect((await human.call('approvals.list', { all: true })).approvals.find((a) => a.id === approval.id)?.state.status).toBe('consumed');
    await humanLog.waitFor((e) => e.type === 'tool.call.finished' && e.call.approvalId === approval.id);

    // The audit log has the decision and the call (written before the call was answered), but not the argument values.
    const audit = readFileSync(path.join(home.path, 'audit.jsonl'), 'utf8');
    const records = audit.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ record: 'approval', approvalId: approval.id, decision: 'approved', tool: 'echo' }),
        expect.objectContaining({ record: 'tool.call', approvalId: approval.id, outcome: 'ok', tool: 'echo', argumentsDigest: approval.binding.argumentsDigest }),
      ]),
    );
    expect(audit).not.toContain('canary-argument-value');
  });

  it('asks for every call, one approval each', async () => {
    await callApproved('count');
    await callApproved('count');
    expect(await countCalls()).toBe(2);
  });

  it('does not run a denied call', async () => {
    const before = await countCalls();
    const asked = requested(humanLog);
    const pending = call('count', { note: 'deny me' });
    const { approval } = await asked;
    await human.call('approvals.respond', { id: approval.id, decision: 'deny' });
    await expect(pending).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    expect(await countCalls()).toBe(before);
  });

  it('cancels the approval when the asker disconnects while it is pending', async () => {
    const before = await countCalls();
    const leaving = await daemon.connect();
    const asked = requested(humanLog);
    void call('count', {}, leaving).catch(() => undefined);
    const { approval } = await asked;
    const resolved = humanLog.next((e) => e.type === 'approval.resolved' && e.approval.id === approval.id);
    await leaving.close();
    expect(await resolved).toMatchObject({ approval: { state: { status: 'cancelled', reason: 'the client disconnected' } } });
    await expect(human.call('approvals.respond', { id: approval.id, decision: 'approve' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    expect(await countCalls()).toBe(before);
  });

  it('reports isError as a failure with what the tool said', async () => {
    const error = await callApproved('fail').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TOOL_ERROR', details: { result: { text: 'it went wrong on purpose' } } });
  });

  it('caps a 100,000-character result at 32,000 with a flag and the original length', async () => {
    const result = await callApproved('big', { chars: 100_000 });
    expect(result).toMatchObject({ truncated: true, originalLength: 100_000 });
    expect(result.text).toHaveLength(32_000);
    expect(result.content[0]).toMatchObject({ type: 'text' });
    expect((result.content[0] as { text: string }).text).toHaveLength(32_000);
  });

  it('keeps text, embedded text and structured content; replaces images, audio, blobs and links with markers', async () => {
    const result = await callApproved('media');
    expect(result.content).toEqual([
      { type: 'text', text: 'here is everything' },
      { type: 'omitted', originalType: 'image', mimeType: 'image/png', bytes: 14, uri: null, name: null },
      { type: 'omitted', originalType: 'audio', mimeType: 'audio/wav', bytes: 8, uri: null, name: null },
      { type: 'resource', uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'embedded text' },
      { type: 'omitted', originalType: 'resource', mimeType: 'application/octet-stream', bytes: 10, uri: 'file:///blob.bin', name: null },
      { type: 'omitted', originalType: 'resource_link', mimeType: null, bytes: null, uri: 'https://example.com/never-opened', name: 'link' },
    ]);
    expect(result.structuredContent).toEqual({ ok: true, n: 3 });
    expect(result.text).toBe('here is everything\nembedded text');
    expect(JSON.stringify(result)).not.toContain(Buffer.from('fake png bytes').toString('base64'));
  });

  it('refuses a 40 KB argument and a schema violation before any approval is created', async () => {
    const events = humanLog.events.length;
    await expect(call('echo', { text: 'x'.repeat(40 * 1024) })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxCallArgumentBytes' } });
    const invalid = await call('big', { chars: 'many' }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: 'INVALID_ARGUMENTS', details: { errors: [{ path: '/chars', message: 'must be integer' }] } });
    await expect(call('big', {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await human.call('daemon.status');
    expect(humanLog.events.slice(events).filter((e) => e.type === 'approval.requested')).toEqual([]);
  });

  it('refuses an unknown tool', async () => {
    await expect(asker.call('tools.call', { modelName: 'mcp_000000000000_0000000000000000', arguments: {} })).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
  });

  it('makes a pending approval stale when the tool list changes: asked again for an unchanged tool, refused for a changed one', async () => {
    const before = await countCalls();
    const asked = requested(humanLog);
    const pending = call('count');
    const { approval } = await asked;
    const { service } = await asker.call('services.get', { id: serviceId });
    if (service.connection.status !== 'active') throw new Error('not active');
    // A tool is added: `count` is unchanged, so the same call is asked about again at the new version.
    const askedAgain = requested(humanLog);
    process.kill(pidOf(service), 'SIGUSR2');
    const { approval: again } = await askedAgain;
    expect(again.binding).toMatchObject({ toolName: 'count', toolListVersion: Number(approval.binding.toolListVersion) + 1, argumentsDigest: approval.binding.argumentsDigest });
    await expect(human.call('approvals.respond', { id: approval.id, decision: 'approve' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING', details: { status: 'stale' } });
    expect(await countCalls()).toBe(before);
    await human.call('approvals.respond', { id: again.id, decision: 'approve' });
    expect((await pending).text).toBe(String(before + 1));

    // `env` goes away: its pending call is stale, and nothing runs.
    const envAsked = requested(humanLog);
    const envCall = call('env');
    const { approval: envApproval } = await envAsked;
    const { service: now } = await asker.call('services.get', { id: serviceId });
    process.kill(pidOf(now), 'SIGHUP');
    await expect(envCall).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    await expect(human.call('approvals.respond', { id: envApproval.id, decision: 'approve' })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING', details: { status: 'stale' } });
    // A fresh call against the new tool list works.
    expect((await callApproved('count')).text).toBe(String(before + 2));
  });

  it('times out a hanging call: the connection is closed, the service failed, nothing retried', async () => {
    // The limit covers activation too: ample for it on a loaded 2-CPU machine. The call itself never answers.
    const hanger = await registerScenario(asker, 'hanger', ['--call-tools'], { timeoutMs: 8000 });
    const active = await activate(asker, 'hanger');
    if (active.connection.status !== 'active') throw new Error('not active');
    const pid = pidOf(active);
    const asked = requested(humanLog);
    const pending = asker.call('tools.call', { serviceId: hanger.id, toolName: 'hang', arguments: {} });
    pending.catch(() => undefined);
    await human.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
    await expect(pending).rejects.toMatchObject({ code: 'TIMEOUT' });
    const { service } = await asker.call('services.get', { id: hanger.id });
    expect(service.connection).toMatchObject({ status: 'failed', code: 'TIMEOUT', message: 'a call to hang was timed out, so the connection was closed; start it again with: wispctl mcp restart hanger' });
    // What mcp list shows the user: why it stopped and how to start it again.
    expect((await runWispctl(['--socket', daemon.socket, 'mcp', 'show', 'hanger'], { env: daemonEnv() })).stdout).toContain('start it again with: wispctl mcp restart hanger');
    expect((await asker.call('tools.list', { serviceId: hanger.id })).tools).toEqual([]);
    expect((await asker.call('services.logs', { id: hanger.id })).stderr.match(/hang called/g)).toHaveLength(1);
    await asker.call('services.disable', { id: hanger.id });
    expect(isRunning(pid)).toBe(false);
  });

  it('cancels pending approvals of a service that is disabled', async () => {
    const asked = requested(humanLog);
    const outcome = call('count').catch((e: unknown) => e);
    const { approval } = await asked;
    await human.call('services.disable', { id: serviceId });
    expect(await outcome).toMatchObject({ code: 'CANCELLED' });
    expect((await human.call('approvals.list', { all: true })).approvals.find((a: Approval) => a.id === approval.id)?.state).toMatchObject({
      status: 'cancelled',
      reason: 'tools is stopping',
    });
  });
});

describe('structured content', () => {
  let structured: string;
  beforeAll(async () => {
    structured = (await registerScenario(asker, 'structured', ['--structured-tools'])).id;
    expect((await activate(asker, 'structured')).connection.status).toBe('active');
  });

  async function callStructured(toolName: string, args: Record<string, unknown> = {}) {
    const asked = requested(humanLog);
    const result = asker.call('tools.call', { serviceId: structured, toolName, arguments: args });
    result.catch(() => undefined);
    await human.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
    return result;
  }

  it('replaces the base64 of an image in structuredContent with a marker, as in content (server-filesystem\'s read_media_file)', async () => {
    const result = await callStructured('media-structured');
    const data = Buffer.from(Array.from({ length: 3072 }, (_, i) => (i * 7) % 256)).toString('base64');
    expect(result.content).toEqual([{ type: 'omitted', originalType: 'image', mimeType: 'image/png', bytes: 3072, uri: null, name: null }]);
    expect(result.structuredContent).toEqual({
      content: [{ type: 'image', data: '[omitted by Wisp: data image/png, 3072 bytes]', mimeType: 'image/png' }],
      preview: '[omitted by Wisp: data URI image/png, 300 bytes]',
      raw: '[omitted by Wisp: binary, 3072 bytes]',
      note: 'a picture',
      // Short base64-looking text is text: a word, an id, a hash.
      short: 'aGVsbG8=',
    });
    expect(result).toMatchObject({ structuredOmitted: null, truncated: false });
    expect(JSON.stringify(result)).not.toContain(data.slice(0, 64));
  });

  it('lists a tool that requires tasks as unavailable, with why, and refuses a call on it before any approval (TOOL_UNAVAILABLE)', async () => {
    const { tools } = await asker.call('tools.list', { serviceId: structured });
    const tasksOnly = tools.find((t) => t.name === 'tasks-only');
    expect(tasksOnly).toMatchObject({ pin: 'trusted', unavailable: expect.stringContaining('execution.taskSupport "required"') });
    expect(tools.filter((t) => t.unavailable !== null).map((t) => t.name)).toEqual(['tasks-only']);
    const seen = humanLog.events.length;
    for (const target of [{ serviceId: structured, toolName: 'tasks-only' }, { modelName: tasksOnly?.modelName ?? '' }]) {
      const pending = asker.call('tools.call', { ...target, arguments: {} });
      pending.catch(() => undefined);
      // Before, it was put before the human, and the approved call failed with the server's -32601.
      const outcome = await Promise.race([pending.catch((e: unknown) => e), requested(humanLog).then(() => 'an approval was asked')]);
      expect(outcome).toMatchObject({ code: 'TOOL_UNAVAILABLE', message: expect.stringContaining('structured/tasks-only cannot be called') });
    }
    expect(humanLog.events.slice(seen).filter((e) => e.type === 'approval.requested' || e.type === 'tool.call.started')).toEqual([]);
  });

  it('leaves out structuredContent over 32,000 characters of JSON, with the flag and why; the text is kept', async () => {
    const result = await callStructured('big-structured', { chars: 100_000 });
    expect(result).toMatchObject({
      text: 'a big structured answer',
      structuredContent: null,
      structuredOmitted: { characters: 100_011, reason: 'its JSON is 100011 characters, over the 32000-character cap' },
      truncated: true,
      originalLength: 23,
    });
    const small = await callStructured('big-structured', { chars: 1000 });
    expect(small).toMatchObject({ structuredContent: { rows: 'word '.repeat(200) }, structuredOmitted: null, truncated: false });
  });
});
