import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, ToolCallResult, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { findLeak, makeCanary, makeEncodableCanary, sweepForCanary } from '../helpers/canary.js';
import { EventLog } from '../helpers/services.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { shown, until } from '../helpers/wait.js';

/**
 * A secret a service holds (its variable CANARY, kept in memory) is handed back by hostile
 * servers in every field a result, an error, a tool definition, stdout and stderr can carry.
 * It must never leave the daemon: not in replies, events, files, the log, the model's
 * requests, transcripts, or wispctl's output, nor base64- or percent-encoded in any of them
 * (issue 33, LOW 10). At the end, every channel is swept for both secrets.
 */
const hostile = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const SECRET = makeCanary();
/** A second service's secret, which its server echoes only encoded (base64, percent in any case). */
const ENCODED = makeEncodableCanary('ENCODED');
const MARK = '[REDACTED:CANARY]';
const API_KEY = 'sk-model-key-for-redaction-7781';
const mock = new MockDeepSeek();
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let log: EventLog;
const replies: unknown[] = [];
const terminal: string[] = [];

/** Every reply (and error) a test sees goes to the sweep. */
async function call<T>(pending: Promise<T>): Promise<T> {
  try {
    const value = await pending;
    replies.push(value);
    return value;
  } catch (error) {
    replies.push({ error: { ...(error as object), message: (error as Error).message } });
    throw error;
  }
}

async function failure(pending: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const error = (await call(pending).then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; message: string; details: Record<string, unknown> } | undefined;
  if (error === undefined) throw new Error('expected the call to fail');
  return error;
}

/** Registers `mode` of the hostile server with CANARY in its (session-only) variables, activated. */
async function hostileService(name: string, mode: string, secret = SECRET): Promise<Service> {
  const { service } = await call(client.call('services.register', { name, command: process.execPath, args: [hostile, mode, 'CANARY'] }));
  const set = await call(client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'CANARY', value: secret, storage: 'session' }] }));
  return (await call(client.call('services.activate', { id: service.id, configVersion: set.service.configVersion }))).service;
}

/** services.logs once it satisfies `ready` (stderr and stdout are separate pipes: stderr may still be in flight). */
function logsWhen(service: Service, what: string, ready: (logs: { stderr: string; droppedChars: number }) => boolean): Promise<{ stderr: string; droppedChars: number }> {
  return until(`${service.name}'s logs to show ${what}`, () => call(client.call('services.logs', { id: service.id })), ready, { show: (logs) => shown(logs.stderr) });
}

function callTool(service: Service, toolName: string): Promise<ToolCallResult> {
  const pending = call(client.call('tools.call', { serviceId: service.id, toolName, arguments: {} }));
  pending.catch(() => undefined);
  return pending;
}

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'], env: daemonEnv({ DEEPSEEK_API_KEY: API_KEY }) });
  client = await daemon.connect();
  log = await EventLog.follow(client);
  // A human who approves everything, from a second client (its replies are swept too).
  const human = await daemon.connect();
  human.onEvent((event) => {
    if (event.type === 'approval.requested') {
      void call(human.call('approvals.respond', { id: event.approval.id, decision: 'approve' })).catch(() => undefined);
    }
  });
  await human.call('events.subscribe', {});
  await call(client.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 }));
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

describe('redaction of a secret a hostile server hands back', () => {
  let content: Service;
  let definition: Service;

  it('covers every field of a result: uris, mime types, names, titles, annotations, _meta, keys', async () => {
    content = await hostileService('content', 'leak-content');
    expect(content.connection.status).toBe('active');
    const result = await callTool(content, 'leak');
    const shown = JSON.stringify(result);
    expect(shown).not.toContain(SECRET);
    expect(result.text).toContain(`plain ${MARK}`);
    expect(result.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'resource', uri: `file:///tmp/${MARK}.txt`, mimeType: `text/${MARK}` }),
        expect.objectContaining({ type: 'omitted', originalType: 'resource', uri: `https://example.invalid/?token=${MARK}`, mimeType: `application/${MARK}` }),
        expect.objectContaining({ type: 'omitted', originalType: 'resource_link', uri: `https://example.invalid/${MARK}`, mimeType: `text/${MARK}` }),
        expect.objectContaining({ type: 'omitted', originalType: 'image', mimeType: `image/${MARK}` }),
        expect.objectContaining({ type: 'omitted', originalType: 'audio', mimeType: `audio/${MARK}` }),
      ]),
    );
    expect(result.structuredContent).toEqual({ token: MARK, [MARK]: 'as a key', nested: [{ deep: `${MARK}!` }] });

    // The same result as a tool error: the reply's message and data.result, and the failure event.
    const error = await failure(callTool(content, 'leak-error-result'));
    expect(error.code).toBe('TOOL_ERROR');
    expect(JSON.stringify(error)).not.toContain(SECRET);
    const failed = await log.waitFor((e) => e.type === 'tool.call.failed' && e.call.toolName === 'leak-error-result');
    expect(JSON.stringify(failed)).not.toContain(SECRET);
  });

  it('covers tool definitions: titles, descriptions, schemas and annotations, wherever they are shown', async () => {
    definition = await hostileService('definition', 'leak-tool-definition');
    const { tools } = await call(client.call('tools.list', { serviceId: definition.id }));
    expect(tools).toHaveLength(1);
    expect(JSON.stringify(tools)).not.toContain(SECRET);
    expect(tools[0]).toMatchObject({ title: `Title ${MARK}`, description: `Description ${MARK}` });
    expect(Object.keys((tools[0]?.inputSchema as { properties: object }).properties)).toContain(`p_${MARK}`);
    // The call is still made with the server's real name, and its approval shows the redacted title.
    const approval = log.next((e) => e.type === 'approval.requested');
    const result = await callTool(definition, 'defined');
    expect(result.text).toBe('ok');
    const requested = (await approval) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(requested.approval.summary.title).toBe(`Title ${MARK}`);
  });

  it.each([-32603, -32000, -32001])('a JSON-RPC error %i from the server is its answer: TOOL_ERROR with its code and redacted message; the service stays active', async (code) => {
    const name = `errors${-code}`;
    const service = await hostileService(name, 'leak-error');
    const started = Date.now();
    const error = await failure(callTool(service, `fail${code}`));
    expect(error.code).toBe('TOOL_ERROR');
    expect(error.message).toContain(`boom ${MARK}`);
    expect(error.message).toContain(String(code));
    expect(error.details).toMatchObject({ server: { code, message: expect.stringContaining(`boom ${MARK}`) as string } });
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(Date.now() - started).toBeLessThan(8000);
    const failed = await log.waitFor((e) => e.type === 'tool.call.failed' && e.call.service.name === name);
    expect(failed).toMatchObject({ code: 'TOOL_ERROR' });
    expect(JSON.stringify(failed)).not.toContain(SECRET);
    // Still active: the same connection answers the next call.
    const after = (await call(client.call('services.get', { id: service.id }))).service;
    expect(after.connection).toMatchObject({ status: 'active', generation: 1 });
    expect((await callTool(service, 'fine')).text).toBe('ok');
    await call(client.call('services.disable', { id: service.id }));
  });

  it('covers the stdout excerpt of a failed connection (redacted before it is cut) and the stderr tail', async () => {
    const service = await hostileService('garbler', 'leak-stdout');
    const failedState = log.waitFor((e) => e.type === 'service.state' && e.service.id === service.id && e.connection.status === 'failed');
    const error = await failure(callTool(service, 'garble'));
    expect(JSON.stringify(error)).not.toContain(SECRET.slice(0, 12));
    const state = (await failedState) as Extract<WispEvent, { type: 'service.state' }>;
    expect(state.connection).toMatchObject({ status: 'failed', code: 'PROTOCOL_ERROR' });
    const message = (state.connection as { message: string }).message;
    expect(message).toContain('other than JSON-RPC');
    expect(message).toContain('[REDACTED');
    const shown = (await call(client.call('services.get', { id: service.id }))).service;
    expect(JSON.stringify(shown)).not.toContain(SECRET.slice(0, 12));
    const logs = await logsWhen(service, 'the whole stderr (" done")', (l) => l.stderr.includes(' done\n'));
    expect(logs.stderr).toContain(`starting with ${MARK}`);
    expect(logs.stderr).toContain(`half-written ${MARK} done`);
  });

  it('redacts the stderr tail, also where its bound cut a copy of the secret in two', async () => {
    const service = await hostileService('shouter', 'leak-stderr');
    expect((await callTool(service, 'shout')).text).toBe('shouted');
    const logs = await logsWhen(service, '"stderr on call"', (l) => l.stderr.includes('stderr on call'));
    expect(logs.stderr).toContain(`stderr on call: ${MARK}`);
    expect(logs.stderr).not.toContain(SECRET);
    expect((await callTool(service, 'flood')).text).toBe('flooded');
    const flooded = await logsWhen(service, 'dropped characters and the flood\'s end', (l) => l.droppedChars > 0 && l.stderr.endsWith('y\n'));
    expect(flooded.droppedChars).toBeGreaterThan(0);
    expect(flooded.stderr.startsWith(MARK)).toBe(true);
    expect(flooded.stderr).not.toContain(SECRET.slice(-8));
  });

  it('redacts before it truncates: a secret straddling the 32,000-character cut leaves no piece', async () => {
    const service = await hostileService('straddle', 'leak-straddle');
    const result = await callTool(service, 'long');
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBe(32_000);
    expect(result.text).not.toContain(SECRET.slice(0, 10));
    expect(result.text.endsWith('a'.repeat(10))).toBe(false);
    expect(result.text.slice(31_990)).toBe(MARK.slice(0, 10));
  });

  it('keeps a value redacted while another service still holds it', async () => {
    const twin = await hostileService('twin', 'leak-content');
    await call(client.call('services.delete', { id: twin.id }));
    const result = await callTool(content, 'leak');
    expect(result.text).toContain(`plain ${MARK}`);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    // And a variable of the same value replaced on one service does not unredact the other's.
    const other = await hostileService('other', 'leak-content');
    await call(client.call('services.setEnv', { id: other.id, mode: 'replace', variables: [{ name: 'CANARY', value: 'something-else-entirely', storage: 'session' }] }));
    expect(JSON.stringify(await callTool(content, 'leak'))).not.toContain(SECRET);
  });

  it('never sends the secret to the model: tool definitions, tool results, errors; nor to the transcript', async () => {
    const { tools } = await call(client.call('tools.list', {}));
    const leak = tools.find((t) => t.serviceId === content.id && t.name === 'leak')?.modelName ?? '';
    const defined = tools.find((t) => t.serviceId === definition.id)?.modelName ?? '';
    const erroring = await hostileService('errors-model', 'leak-error');
    const fail = (await call(client.call('tools.list', { serviceId: erroring.id }))).tools.find((t) => t.name === 'fail-32603')?.modelName ?? '';
    mock.enqueue(
      {
        events: toolCallEvents([
          { id: 'call_1', name: leak, arguments: '{}' },
          { id: 'call_2', name: defined, arguments: '{}' },
          { id: 'call_3', name: fail, arguments: '{}' },
        ]),
      },
      { events: textEvents('Done.') },
    );
    const { session } = await call(client.call('sessions.create', { title: 'leaks' }));
    const { task } = await call(client.call('sessions.send', { id: session.id, text: 'Use the tools.' }));
    const ended = (await log.waitFor(
      (e) => e.type === 'task.state' && e.task.id === task.id && !['running', 'awaiting_approval'].includes(e.task.state.status),
    )) as Extract<WispEvent, { type: 'task.state' }>;
    expect(ended.task.state.status).toBe('completed');
    expect(mock.requests).toHaveLength(2);
    const [first, second] = mock.requests;
    // The definitions went out (redacted), and the results came back to the model (redacted).
    expect(JSON.stringify(first?.body.tools)).toContain(`Description ${MARK}`);
    const toolMessages = (second?.body.messages ?? []).filter((m) => m.role === 'tool');
    expect(toolMessages).toHaveLength(3);
    expect(JSON.stringify(toolMessages)).toContain(MARK);
    for (const request of mock.requests) expect(JSON.stringify(request.body)).not.toContain(SECRET);
    const transcript = readFileSync(path.join(home.path, 'sessions', `${session.id}.jsonl`), 'utf8');
    expect(transcript).toContain(MARK);
    expect(transcript).not.toContain(SECRET);
    replies.push(await client.call('sessions.get', { id: session.id }));
  });

  it('covers a secret echoed encoded: base64 (alone, a Basic credential, inside blobs at each offset, URL-safe), percent in any case', async () => {
    const { encodings } = (await import(path.join(repoRoot, 'fixtures', 'servers', 'hostile', 'leak-encoded.mjs'))) as { encodings: (s: string) => Record<string, string> };
    const forms = encodings(ENCODED);
    const noLeak = (what: string, value: unknown): void => expect(findLeak(ENCODED, typeof value === 'string' ? value : JSON.stringify(value)), what).toBeNull();
    // Without redaction each of these would show the secret to anyone who decodes it.
    for (const [name, form] of Object.entries(forms)) expect(findLeak(ENCODED, form), name).not.toBeNull();
    const service = await hostileService('encoded', 'leak-encoded', ENCODED);
    const { tools } = await call(client.call('tools.list', { serviceId: service.id }));
    noLeak('tool definitions', tools);
    expect(tools.find((t) => t.name === 'echo-encoded')).toMatchObject({ title: `Echo Basic YWxpY2U6${MARK}` });

    const result = await callTool(service, 'echo-encoded');
    noLeak('the result', result);
    for (const name of Object.keys(forms)) expect(result.text).toMatch(new RegExp(`^${name}=.*\\[REDACTED:CANARY\\]`, 'm'));
    expect(result.text).toContain(`base64=${MARK}\n`);
    expect(result.text).toContain(`lowerPercent=${MARK}\n`);
    expect(result.structuredContent).toMatchObject({ [MARK]: 'as a key', base64url: MARK, mixedPercent: MARK, formField: MARK });
    expect(result.content).toEqual(expect.arrayContaining([expect.objectContaining({ uri: `https://example.invalid/cb?code=${MARK}&state=${MARK}` })]));

    const error = await failure(callTool(service, 'fail'));
    expect(error.code).toBe('TOOL_ERROR');
    expect(error.message).toContain(`basic=Basic YWxpY2U6${MARK}`);
    noLeak('the error', error);
    noLeak('the failure event', await log.waitFor((e) => e.type === 'tool.call.failed' && e.call.service.name === 'encoded'));
    const logs = await logsWhen(service, '"called fail"', (l) => l.stderr.includes('called fail'));
    expect(logs.stderr).toContain(`upperPercent=${MARK}`);
    noLeak('the stderr tail', logs);

    // The model sees the definition and the result, both redacted.
    const modelName = tools.find((t) => t.name === 'echo-encoded')?.modelName ?? '';
    const before = mock.requests.length;
    mock.enqueue({ events: toolCallEvents([{ id: 'call_e', name: modelName, arguments: '{}' }]) }, { events: textEvents('Done.') });
    const { session } = await call(client.call('sessions.create', { title: 'encoded' }));
    const { task } = await call(client.call('sessions.send', { id: session.id, text: 'Echo.' }));
    await log.waitFor((e) => e.type === 'task.state' && e.task.id === task.id && e.task.state.status === 'completed');
    const sent = mock.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(JSON.stringify(sent[1]?.body.messages)).toContain(`blob1=e0`);
    for (const request of sent) noLeak('a model request', request.body);
  });

  it('the canary sweep: no reply, event, file, log line, model request, transcript or wispctl output holds it', async () => {
    const env = daemonEnv({ WISP_SOCKET: daemon.socket, WISP_HOME: home.path });
    for (const args of [['mcp', 'list'], ['--json', 'mcp', 'list'], ['mcp', 'show', 'content'], ['mcp', 'tools'], ['mcp', 'logs', 'shouter'], ['mcp', 'logs', 'garbler'], ['mcp', 'logs', 'encoded'], ['approvals', '--all'], ['sessions', 'list']]) {
      const out = await runWispctl(args, { env });
      terminal.push(out.stdout, out.stderr);
    }
    expect(terminal.join('')).toContain('content');
    // Events replayed from the start, as a client that reconnects sees them.
    const late = await daemon.connect();
    const replayed: WispEvent[] = [];
    late.onEvent((e) => replayed.push(e));
    await late.call('events.subscribe', { since: 0 });
    await log.waitFor((e) => e.type === 'task.state' && e.task.state.status === 'completed');
    for (const secret of [SECRET, ENCODED]) {
      const { files } = await sweepForCanary(secret, {
        replies,
        events: [...log.events, ...replayed],
        dataDir: home.path,
        expectFiles: ['mcp-servers.json', 'audit.jsonl'],
        daemonOutput: daemon.output(),
        modelRequests: mock.requests.map((r) => r.body),
        terminal,
      });
      expect(files.some((f) => f.includes(`${path.sep}sessions${path.sep}`))).toBe(true);
    }
    expect(log.events.length).toBeGreaterThan(20);
    await late.close();
  });
});
