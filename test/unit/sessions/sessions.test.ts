import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MockDeepSeek, textEvents, toolCallEvents, type RecordedRequest } from '../../../fixtures/model/mock-deepseek.mjs';
import { WispError } from '../../../src/core/index.js';
import { modelToolName } from '../../../src/mcp/index.js';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../../../src/model/index.js';
import { HOST_TOOLS } from '../../../src/sessions/host-tools.js';
import { InMemoryServers, storedService, tool, toolServer } from '../mcp/in-memory.js';
import { harness, type Harness } from './harness.js';

const mock = new MockDeepSeek({ enforceReasoningPassback: true });
let settings: ModelSettings;
let h: Harness | undefined;

beforeAll(async () => {
  // No retries (each scripted answer is used once); deadlines with room for a loaded machine.
  settings = { ...DEFAULT_MODEL_SETTINGS, baseUrl: await mock.start(), model: 'mock-model', maxRetries: 0, firstByteTimeoutMs: 15_000, idleTimeoutMs: 15_000 };
});
afterAll(() => mock.stop());
beforeEach(() => mock.clear());
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(more: Parameters<typeof harness>[1] = {}): Promise<Harness> {
  h = await harness(settings, more);
  return h;
}

/** The requests the mock received from index `first` on. */
function requestsFrom(first: number): RecordedRequest[] {
  return mock.requests.slice(first);
}

function lastMessage(request: RecordedRequest | undefined): Record<string, unknown> | undefined {
  return request?.body.messages?.at(-1);
}

/** The MCP tools a request offered (the host tools left out). */
function offered(request: RecordedRequest | undefined): string[] {
  const host = new Set(HOST_TOOLS.map((t) => t.name));
  return (request?.body.tools ?? []).map((t) => t.function.name).filter((name) => !host.has(name));
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('Sessions (real model HTTP mock, in-memory MCP server, real approvals)', () => {
  it('ends a task whose model answers with text completed: transcript, events in order, what the model was sent', async () => {
    const { sessions, events, modelName, reopen } = await start();
    const first = mock.requests.length;
    mock.enqueue({ events: textEvents('Hello there', { reasoning: 'Thinking.' }) });
    const { id } = await sessions.create('greeting');
    const task = await sessions.send(id, 'Say hello.', 'client-1');
    expect(task).toMatchObject({ sessionId: id, state: { status: 'running' }, rounds: 0, tools: [modelName('echo')] });

    const ended = await events.ended(task.id);
    expect(ended).toMatchObject({ state: { status: 'completed', finishReason: 'stop' }, rounds: 1, endedAt: expect.any(String) as string });
    const got = sessions.get(id);
    expect(got.messages).toEqual([
      { role: 'user', content: 'Say hello.' },
      { role: 'assistant', content: 'Hello there', reasoning_content: 'Thinking.' },
    ]);
    expect(got.tasks).toEqual([ended]);
    expect(got.session).toMatchObject({ title: 'greeting', messageCount: 2, lastTask: ended });

    const told = events.all.flatMap((e) => {
      if (e.kind === 'task.changed' && e.task.id === task.id) return [`task.changed ${e.task.state.status}`];
      if ((e.kind === 'model.streamed' || e.kind === 'model.turned') && e.taskId === task.id) return [e.kind === 'model.streamed' ? `streamed ${e.part} ${e.text}` : `turned ${e.turn.content}`];
      return [];
    });
    expect(told).toEqual(['task.changed running', 'streamed reasoning Thinking.', 'streamed content Hell', 'streamed content o th', 'streamed content ere', 'turned Hello there', 'task.changed completed']);

    const [request, ...more] = requestsFrom(first);
    expect(more).toEqual([]);
    expect(request?.headers.authorization).toBe('Bearer sk-unit-test');
    expect(request?.body).toMatchObject({ model: 'mock-model', stream: true });
    expect(request?.body.messages).toEqual([{ role: 'system', content: expect.any(String) as string }, { role: 'user', content: 'Say hello.' }]);
    expect(offered(request)).toEqual([modelName('echo')]);

    // What a restarted daemon reads back from the transcript file.
    const again = reopen();
    expect(await again.load()).toEqual([]);
    expect(again.get(id)).toMatchObject({ messages: got.messages, tasks: [ended] });
  });

  it('runs a proposed call of an active tool only after a human approves it, once, and gives the result to the model', async () => {
    const { sessions, events, approvals, server, config, modelName } = await start();
    const echo = modelName('echo');
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 'call_1', name: echo, arguments: '{"text":"from the model"}' }], { reasoning: 'I should echo it.' }) },
      { events: textEvents('The tool said: from the model.') },
    );
    const { id } = await sessions.create('echo');
    const task = await sessions.send(id, 'Echo "from the model".', 'client-1');

    const approvalId = await events.awaiting(task.id);
    const approval = approvals.get(approvalId);
    expect(approval).toMatchObject({
      kind: 'tool_call',
      requester: { clientId: 'client-1', sessionId: id, taskId: task.id },
      state: { status: 'pending' },
      summary: { serviceName: 'tools', toolName: 'echo', modelName: echo, arguments: { text: 'from the model' } },
    });
    expect(approval.binding).toEqual({ serviceId: config.id, generation: 1, toolListVersion: 1, toolName: 'echo', argumentsDigest: sha256('{"text":"from the model"}') });
    expect(sessions.get(id).tasks[0]?.state).toEqual({ status: 'awaiting_approval', approvalId });
    expect(server.calls).toEqual([]);
    expect(requestsFrom(first)).toHaveLength(1);

    approvals.respond(approvalId, 'approve', 'a human');
    expect(await events.ended(task.id)).toMatchObject({ state: { status: 'completed', finishReason: 'stop' }, rounds: 2 });
    expect(server.calls).toEqual([{ name: 'echo', arguments: { text: 'from the model' } }]);
    expect(approvals.get(approvalId).state.status).toBe('consumed');
    expect(events.states(task.id)).toEqual(['running', 'awaiting_approval', 'running', 'completed']);

    const [, second] = requestsFrom(first);
    expect(second?.body.messages?.slice(-2)).toEqual([
      { role: 'assistant', content: null, reasoning_content: 'I should echo it.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: echo, arguments: '{"text":"from the model"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'from the model' },
    ]);
    expect(sessions.get(id).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('never runs a denied call, and tells the model it was denied', async () => {
    const { sessions, events, approvals, server, modelName } = await start();
    const first = mock.requests.length;
    mock.enqueue({ events: toolCallEvents([{ id: 'call_no', name: modelName('echo'), arguments: '{"text":"no"}' }]) }, { events: textEvents('Understood.') });
    const { id } = await sessions.create(undefined);
    const task = await sessions.send(id, 'Try it.', 'client-1');
    const approvalId = await events.awaiting(task.id);
    approvals.respond(approvalId, 'deny', 'a human');

    expect((await events.ended(task.id)).state).toEqual({ status: 'completed', finishReason: 'stop' });
    expect(server.calls).toEqual([]);
    expect(approvals.get(approvalId).state.status).toBe('denied');
    const told = lastMessage(requestsFrom(first)[1]);
    expect(told).toMatchObject({ role: 'tool', tool_call_id: 'call_no' });
    expect(JSON.parse(String(told?.content))).toMatchObject({ error: { code: 'APPROVAL_DENIED' } });
  });

  it('gives the model the tools active when the task began: a tool added on the server later is not in that task, and is in the next', async () => {
    const { sessions, events, server, tools, config, listChanged, modelName, supervisor } = await start();
    const echo = modelName('echo');
    const late = modelToolName(config.id, 'late');
    const first = mock.requests.length;
    // The first answer is held until the tool has been added, then proposes a call of it.
    mock.enqueue(
      { events: [{ gate: 'added' }, ...toolCallEvents([{ id: 'call_late', name: late, arguments: '{}' }])] },
      { events: textEvents('It is not there.') },
    );
    const { id } = await sessions.create('snapshot');
    const task = await sessions.send(id, 'Use the late tool.', 'client-1');

    const discovered = events.when((e) => e.kind === 'tools.discovered' && e.toolListVersion === 2);
    tools.push(tool('late'));
    await listChanged();
    await discovered;
    // Added after the service was trusted: held, so not callable even outside the task's snapshot.
    expect(supervisor.tools(config.id).map((t) => t.modelName)).toEqual([echo]);
    expect(supervisor.heldTools(config.id).map((t) => t.modelName)).toEqual([late]);
    mock.release('added');

    expect((await events.ended(task.id)).state.status).toBe('completed');
    expect(task.tools).toEqual([echo]);
    const [round1, round2] = requestsFrom(first);
    expect(offered(round1)).toEqual([echo]);
    expect(offered(round2)).toEqual([echo]);
    expect(JSON.parse(String(lastMessage(round2)?.content))).toEqual({ error: { code: 'TOOL_NOT_FOUND', message: `there is no tool named ${late} in this request` } });
    expect(server.calls).toEqual([]);

    // Once a human accepts it, a task that begins now is given the new tool (in another session: see the known bug below).
    await supervisor.accept(config.id, config.name, 2, supervisor.heldTools(config.id).map((t) => ({ name: t.name, digest: t.pinDigest })));
    mock.enqueue({ events: textEvents('Now I see it.') });
    const next = await sessions.send((await sessions.create('after')).id, 'And now?', 'client-1');
    // Sent in one fixed order (by model name), not in the order they arrived.
    expect(next.tools).toEqual([echo, late].sort());
    await events.ended(next.id);
    expect(offered(mock.requests.at(-1))).toEqual([echo, late].sort());
  });

  it.each([
    ['sessions.cancel', 'cancelled by a client', (x: Harness, sessionId: string) => void x.sessions.cancel(sessionId)],
    ['cancelUsing its service', 'the service is stopping', (x: Harness) => x.sessions.cancelUsing(x.config.id, 'the service is stopping')],
  ])('ends a task cancelled while its approval waits (%s), and cancels the approval', async (_how, reason, cancel) => {
    const x = await start();
    const first = mock.requests.length;
    mock.enqueue({ events: toolCallEvents([{ id: 'call_c', name: x.modelName('echo'), arguments: '{"text":"never"}' }]) }, { events: textEvents('must not be asked') });
    const { id } = await x.sessions.create(undefined);
    const task = await x.sessions.send(id, 'Echo something.', 'client-1');
    const approvalId = await x.events.awaiting(task.id);

    cancel(x, id);
    expect((await x.events.ended(task.id)).state).toEqual({ status: 'cancelled', reason });
    // Straight from waiting to cancelled: clients are never told it runs again.
    expect(x.events.states(task.id).slice(-2)).toEqual(['awaiting_approval', 'cancelled']);
    expect(x.approvals.get(approvalId).state).toMatchObject({ status: 'cancelled' });
    expect(() => x.approvals.respond(approvalId, 'approve', 'too late')).toThrow(expect.objectContaining({ code: 'APPROVAL_NOT_PENDING' }));
    expect(x.server.calls).toEqual([]);
    expect(requestsFrom(first)).toHaveLength(1);
    expect(x.sessions.get(id).tasks[0]?.state.status).toBe('cancelled');
  });

  // Known bug, reported and not fixed here: TaskRun announces a task's final task.changed
  // before it clears session.running (task-run.ts, the finally of run()), so a caller that acts
  // on that event at once is refused TASK_RUNNING. Over the socket the gap is never seen (the
  // client's next request comes after I/O); an in-process caller sees it. Make this `it` once fixed.
  it('accepts the next task of a session as soon as the last one is announced ended', async () => {
    const { sessions, events } = await start();
    mock.enqueue({ events: textEvents('one') }, { events: textEvents('two') });
    const { id } = await sessions.create(undefined);
    const task = await sessions.send(id, 'First.', 'client-1');
    await events.ended(task.id);
    const next = await sessions.send(id, 'Second.', 'client-1');
    expect((await events.ended(next.id)).state.status).toBe('completed');
  });

  it('leaves a task alone when another service stops', async () => {
    const x = await start();
    mock.enqueue({ events: toolCallEvents([{ id: 'call_k', name: x.modelName('echo'), arguments: '{"text":"kept"}' }]) }, { events: textEvents('done') });
    const { id } = await x.sessions.create(undefined);
    const task = await x.sessions.send(id, 'Echo.', 'client-1');
    const approvalId = await x.events.awaiting(task.id);
    x.sessions.cancelUsing('some-other-service', 'it stopped');
    x.approvals.respond(approvalId, 'approve', 'a human');
    expect((await x.events.ended(task.id)).state.status).toBe('completed');
    expect(x.server.calls).toEqual([{ name: 'echo', arguments: { text: 'kept' } }]);
  });

  it.each([
    [401, 'MODEL_AUTH', 'Authentication Fails (invalid key)'],
    [402, 'MODEL_BALANCE', 'Insufficient Balance'],
    [400, 'MODEL_BAD_REQUEST', 'Invalid request'],
    [429, 'MODEL_RATE_LIMITED', 'Rate Limit Reached'],
    [500, 'MODEL_UNAVAILABLE', 'Server Error'],
  ])('fails a task when the model API answers HTTP %i: %s', async (status, code, message) => {
    const { sessions, events } = await start();
    mock.enqueue({ status, body: { error: { message } } });
    const { id } = await sessions.create(undefined);
    const task = await sessions.send(id, 'Hello?', 'client-1');
    expect((await events.ended(task.id)).state).toEqual({ status: 'failed', code, message: `the model API answered HTTP ${status}: ${message}` });
    expect(events.states(task.id)).toEqual(['running', 'failed']);
    expect(sessions.get(id).messages).toEqual([{ role: 'user', content: 'Hello?' }]);
  });

  it('fails a task MODEL_NO_KEY when there is no API key, without asking the model', async () => {
    const { sessions, events } = await start({ apiKey: () => Promise.reject(new WispError('MODEL_NO_KEY', 'no DeepSeek API key is set')) });
    const first = mock.requests.length;
    const { id } = await sessions.create(undefined);
    const task = await sessions.send(id, 'Hello?', 'client-1');
    expect((await events.ended(task.id)).state).toEqual({ status: 'failed', code: 'MODEL_NO_KEY', message: 'no DeepSeek API key is set' });
    expect(requestsFrom(first)).toEqual([]);
  });

  it('runs host tools through their own approvals: lists the services, activates a registered one (its tools wait for the next task)', async () => {
    const extra = new InMemoryServers().add('later', () => toolServer([tool('later-tool')]).server);
    const x = await start({ extra });
    const later = storedService('later', { enabled: false });
    x.registry.set(later.id, later);
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 'list', name: 'mcp_list_services', arguments: '{}' }]) },
      { events: toolCallEvents([{ id: 'act', name: 'mcp_activate_service', arguments: '{"name":"later"}' }]) },
      { events: textEvents('It is active.') },
    );
    const { id } = await x.sessions.create(undefined);
    const task = await x.sessions.send(id, 'Start the later service.', 'client-1');

    const listing = x.approvals.get(await x.events.awaiting(task.id, 0));
    expect(listing).toMatchObject({
      kind: 'host_tool',
      requester: { sessionId: id, taskId: task.id },
      binding: { tool: 'mcp_list_services', argumentsDigest: sha256('{}') },
      summary: { serviceName: 'wisp host', toolName: 'mcp_list_services', arguments: {} },
    });
    x.approvals.respond(listing.id, 'approve', 'a human');

    const activation = x.approvals.get(await x.events.awaiting(task.id, 1));
    expect(activation).toMatchObject({
      kind: 'activation',
      binding: { serviceId: later.id, configVersion: 1 },
      summary: { serviceName: 'later', arguments: { command: '/in-memory/later', args: [], configVersion: 1 } },
    });
    expect(x.supervisor.state(later.id).status).toBe('disabled');
    x.approvals.respond(activation.id, 'approve', 'a human');

    expect((await x.events.ended(task.id)).state.status).toBe('completed');
    expect(x.events.states(task.id)).toEqual(['running', 'awaiting_approval', 'running', 'awaiting_approval', 'running', 'completed']);
    expect([listing.id, activation.id].map((a) => x.approvals.get(a).state.status)).toEqual(['consumed', 'consumed']);
    expect(x.supervisor.state(later.id)).toMatchObject({ status: 'active', toolCount: 1 });
    const [, round2, round3] = requestsFrom(first);
    expect(JSON.parse(String(lastMessage(round2)?.content))).toEqual({
      services: [
        { id: x.config.id, name: 'tools', state: 'active', tools: 1 },
        { id: later.id, name: 'later', state: 'disabled', tools: 0 },
      ],
    });
    expect(JSON.parse(String(lastMessage(round3)?.content))).toMatchObject({ service: 'later', state: { status: 'active' } });
    expect(offered(round3)).toEqual([x.modelName('echo')]);
  });
});
