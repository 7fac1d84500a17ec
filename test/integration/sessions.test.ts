import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Task, WispEvent } from '../../src/core/index.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, EventLog, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

const API_KEY = 'sk-daemon-key-4417';
const mock = new MockDeepSeek({ enforceReasoningPassback: true });
const home = tempDir();
let daemon: RunningDaemon;
let asker: WispClient;
let human: WispClient;
let humanLog: EventLog;
let echoName: string;

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'], env: daemonEnv({ DEEPSEEK_API_KEY: API_KEY }) });
  asker = await daemon.connect();
  human = await daemon.connect();
  humanLog = await EventLog.follow(human);
  await asker.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
  await registerScenario(asker, 'tools', ['--call-tools', '--print-env']);
  await activate(asker, 'tools');
  echoName = (await asker.call('tools.list')).tools.find((t) => t.name === 'echo')?.modelName ?? '';
});
beforeEach(() => mock.clear());
afterAll(async () => {
  await asker.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  await mock.stop();
  killLeftovers();
  home.remove();
});

function taskEnd(log: EventLog, taskId: string): Promise<Task> {
  return log
    .waitFor((e) => e.type === 'task.state' && e.task.id === taskId && !['running', 'awaiting_approval'].includes(e.task.state.status))
    .then((e) => (e as Extract<WispEvent, { type: 'task.state' }>).task);
}

/** Approves (or denies) the next approval this client sees. */
async function answerNext(decision: 'approve' | 'deny'): Promise<Extract<WispEvent, { type: 'approval.requested' }>> {
  const event = (await humanLog.next((e) => e.type === 'approval.requested')) as Extract<WispEvent, { type: 'approval.requested' }>;
  await human.call('approvals.respond', { id: event.approval.id, decision });
  return event;
}

describe('model sessions', () => {
  it('runs a tool call the model asks for, after a human approves it, and the model continues', async () => {
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 'call_1', name: echoName, arguments: '{"text":"from the model"}' }], { reasoning: 'I should echo it.' }) },
      { events: textEvents('The tool said: from the model.', { reasoning: 'Done.' }) },
    );
    const { session } = await asker.call('sessions.create', { title: 'echo' });
    const answered = answerNext('approve');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'Please echo "from the model".' });
    expect(task).toMatchObject({ state: { status: 'running' }, tools: expect.arrayContaining([echoName]) as string[] });
    const approval = await answered;
    expect(approval.approval).toMatchObject({ requester: { sessionId: session.id, taskId: task.id }, summary: { toolName: 'echo', arguments: { text: 'from the model' } } });
    const ended = await taskEnd(humanLog, task.id);
    expect(ended).toMatchObject({ state: { status: 'completed', finishReason: 'stop' }, rounds: 2 });

    // Every attached client saw the answer stream and the task move through its states.
    const deltas = humanLog.events.filter((e) => e.type === 'model.delta' && e.taskId === task.id && e.kind === 'content');
    expect(deltas.map((e) => (e as { text: string }).text).join('')).toBe('The tool said: from the model.');
    const states = humanLog.events.filter((e) => e.type === 'task.state' && e.task.id === task.id).map((e) => (e as { task: Task }).task.state.status);
    expect(states).toEqual(['running', 'awaiting_approval', 'running', 'completed']);

    // What the model was sent: the tools (labelled untrusted), then its own reasoning and the result.
    const [request1, request2] = mock.requests.slice(first);
    expect(request1?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const offered = request1?.body.tools?.find((t) => t.function.name === echoName);
    expect(offered?.function.description).toContain('untrusted');
    const messages = request2?.body.messages ?? [];
    expect(messages.at(-2)).toMatchObject({ role: 'assistant', reasoning_content: 'I should echo it.', tool_calls: [{ id: 'call_1', function: { name: echoName } }] });
    expect(messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'from the model' });

    const { messages: transcript } = await asker.call('sessions.get', { id: session.id });
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('reports unparsable arguments and denied calls back to the model instead of failing', async () => {
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 'bad', name: echoName, arguments: '{"text": "unfinished' }]) },
      { events: toolCallEvents([{ id: 'denied', name: echoName, arguments: '{"text":"no"}' }]) },
      { events: textEvents('Understood.') },
    );
    const { session } = await asker.call('sessions.create', {});
    const answered = answerNext('deny');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'try' });
    await answered;
    expect((await taskEnd(humanLog, task.id)).state).toEqual({ status: 'completed', finishReason: 'stop' });
    const [, second, third] = mock.requests.slice(first);
    expect(JSON.parse(String(second?.body.messages?.at(-1)?.content))).toMatchObject({ error: { code: 'INVALID_ARGUMENTS' } });
    expect(JSON.parse(String(third?.body.messages?.at(-1)?.content))).toMatchObject({ error: { code: 'APPROVAL_DENIED' } });
  });

  it('leaves a tool that requires tasks out of the task\'s snapshot and the model\'s tools; a call the model makes of it anyway is refused', async () => {
    const service = await registerScenario(asker, 'tasks', ['--structured-tools']);
    await activate(asker, 'tasks');
    const listed = (await asker.call('tools.list', { serviceId: service.id })).tools;
    const name = (tool: string) => listed.find((t) => t.name === tool)?.modelName ?? '';
    const first = mock.requests.length;
    mock.enqueue({ events: toolCallEvents([{ id: 't', name: name('tasks-only'), arguments: '{}' }]) }, { events: textEvents('no tasks then') });
    const { session } = await asker.call('sessions.create', {});
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'use the task tool' });
    expect(task.tools).toContain(name('media-structured'));
    expect(task.tools).not.toContain(name('tasks-only'));
    expect((await taskEnd(humanLog, task.id)).state.status).toBe('completed');
    const [request1, request2] = mock.requests.slice(first);
    expect(request1?.body.tools?.map((t) => t.function.name)).not.toContain(name('tasks-only'));
    expect(JSON.parse(String(request2?.body.messages?.at(-1)?.content))).toMatchObject({ error: { code: 'TOOL_NOT_FOUND' } });
    await asker.call('services.delete', { id: service.id });
  });

  it('keeps a task\'s tool snapshot: a tool activated mid-task appears from the next request', async () => {
    const first = mock.requests.length;
    mock.enqueue({ events: toolCallEvents([{ id: 'c', name: echoName, arguments: '{"text":"x"}' }]) }, { events: textEvents('first done') });
    const { session } = await asker.call('sessions.create', {});
    const requested = humanLog.next((e) => e.type === 'approval.requested');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'one' });
    const pending = (await requested) as Extract<WispEvent, { type: 'approval.requested' }>;
    // While the task waits, a new service is activated.
    await registerScenario(asker, 'late', ['--tools', '1']);
    await activate(asker, 'late');
    const lateTools = (await asker.call('tools.list')).tools.filter((t) => t.serviceName === 'late').map((t) => t.modelName);
    await human.call('approvals.respond', { id: pending.approval.id, decision: 'approve' });
    await taskEnd(humanLog, task.id);
    const round2 = mock.requests.slice(first)[1]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(round2).toContain(echoName);
    expect(round2.filter((n) => lateTools.includes(n))).toEqual([]);

    mock.enqueue({ events: textEvents('second') });
    const { task: next } = await asker.call('sessions.send', { id: session.id, text: 'two' });
    await taskEnd(humanLog, next.id);
    expect(mock.requests.at(-1)?.body.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(lateTools));
    await asker.call('services.delete', { name: 'late' });
  });

  it('sends the tools in one fixed order, whatever order their services were activated in: the same bytes in every task', async () => {
    await registerScenario(asker, 'order-b', ['--tools', '2']);
    await registerScenario(asker, 'order-a', ['--tools', '2']);
    await activate(asker, 'order-b');
    await activate(asker, 'order-a');
    /** The tools of the first request of a new task, as sent. */
    const sentTools = async (): Promise<string> => {
      const first = mock.requests.length;
      mock.enqueue({ events: textEvents('ok') });
      const { session } = await asker.call('sessions.create', {});
      const { task } = await asker.call('sessions.send', { id: session.id, text: 'which tools?' });
      await taskEnd(humanLog, task.id);
      return JSON.stringify(mock.requests[first]?.body.tools);
    };
    const before = await sentTools();
    // order-b stopped and started again: it is now the catalog's newest service.
    await asker.call('services.disable', { name: 'order-b' });
    await activate(asker, 'order-b');
    const after = await sentTools();
    expect(after).toBe(before);
    const names = (JSON.parse(after) as { function: { name: string } }[]).map((t) => t.function.name).filter((n) => /^mcp_[0-9a-f]{12}_[0-9a-f]{16}$/.test(n)); // the services' tools, not the host's (mcp_activate_service)
    expect(names.length).toBeGreaterThanOrEqual(8);
    expect(names).toEqual([...names].sort());
    await asker.call('services.delete', { name: 'order-a' });
    await asker.call('services.delete', { name: 'order-b' });
  });

  it('cancels a task: the model stream stops and the task says so', async () => {
    mock.enqueue({ events: [...textEvents('this never ends').slice(0, 2), { stall: true }] });
    const { session } = await asker.call('sessions.create', {});
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'slow' });
    await humanLog.waitFor((e) => e.type === 'model.delta' && e.taskId === task.id);
    await expect(asker.call('sessions.send', { id: session.id, text: 'again' })).rejects.toMatchObject({ code: 'TASK_RUNNING' });
    const { task: cancelled } = await asker.call('sessions.cancel', { id: session.id });
    expect(cancelled?.state).toEqual({ status: 'cancelled', reason: 'cancelled by a client' });
  });

  it('fails a task with the model API\'s error code', async () => {
    mock.enqueue({ status: 401, body: { error: { message: 'Authentication Fails (invalid key)' } } });
    const { session } = await asker.call('sessions.create', {});
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'hello' });
    expect((await taskEnd(humanLog, task.id)).state).toMatchObject({ status: 'failed', code: 'MODEL_AUTH', message: expect.stringContaining('Authentication Fails') });
  });

  it('never sends a service secret to the model: the canary stays out of every request', async () => {
    const canary = `canary-model-${Date.now()}`;
    const { service } = await asker.call('services.get', { name: 'tools' });
    await asker.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'TOOLS_SECRET', value: canary, storage: 'session' }] });
    await activate(asker, 'tools');
    const envTool = (await asker.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'env-values')?.modelName ?? '';
    echoName = (await asker.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === 'echo')?.modelName ?? '';
    mock.enqueue({ events: toolCallEvents([{ id: 'env', name: envTool, arguments: '{}' }]) }, { events: textEvents('ok') });
    const { session } = await asker.call('sessions.create', {});
    const answered = answerNext('approve');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'show me your environment' });
    await answered;
    await taskEnd(humanLog, task.id);
    const sent = JSON.stringify(mock.requests.map((r) => r.body));
    expect(sent).toContain('[REDACTED:TOOLS_SECRET]');
    expect(sent).not.toContain(canary);
    expect(sent).not.toContain(API_KEY);
    // The model key reaches only the model API: not the server's environment, not the log, not an event.
    expect(daemon.output()).not.toContain(API_KEY);
    expect(JSON.stringify(humanLog.events)).not.toContain(API_KEY);
    const logs = await asker.call('services.logs', { id: service.id });
    expect(logs.stderr).toContain('env: TOOLS_SECRET=[REDACTED:TOOLS_SECRET]');
    expect(logs.stderr).not.toContain('DEEPSEEK_API_KEY');
  });
});

describe('host tools', () => {
  it('lists services, registers a disabled one and activates it, each with its own approval', async () => {
    const fixture = (await asker.call('services.get', { name: 'tools' })).service.args[0] ?? '';
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 'l', name: 'mcp_list_services', arguments: '{}' }]) },
      { events: toolCallEvents([{ id: 'bad', name: 'mcp_register', arguments: JSON.stringify({ name: 'via-npx', command: '/usr/bin/npx', args: ['some-server'] }) }]) },
      { events: toolCallEvents([{ id: 'r', name: 'mcp_register', arguments: JSON.stringify({ name: 'model-made', command: process.execPath, args: [fixture, '--tools', '1'] }) }]) },
      { events: toolCallEvents([{ id: 'a1', name: 'mcp_activate_service', arguments: '{"name":"model-made"}' }]) },
      { events: toolCallEvents([{ id: 'a2', name: 'mcp_activate_service', arguments: '{"name":"model-made"}' }]) },
      { events: textEvents('It is active now.') },
    );
    const { session } = await asker.call('sessions.create', {});
    const listed = answerNext('approve');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'set up a server' });
    expect((await listed).approval).toMatchObject({ kind: 'host_tool', summary: { toolName: 'mcp_list_services' } });

    const registration = (await humanLog.next((e) => e.type === 'approval.requested')) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(registration.approval).toMatchObject({ kind: 'registration', summary: { arguments: { name: 'model-made', command: process.execPath } } });
    expect(await asker.call('services.list').then((r) => r.services.some((x) => x.name === 'model-made'))).toBe(false);
    await human.call('approvals.respond', { id: registration.approval.id, decision: 'approve' });

    // The activation approval shows the configuration; an edit before the answer makes it stale.
    const activation = (await humanLog.next((e) => e.type === 'approval.requested')) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(activation.approval).toMatchObject({ kind: 'activation', summary: { arguments: { command: process.execPath, configVersion: 1 } } });
    const made = (await asker.call('services.get', { name: 'model-made' })).service;
    expect(made).toMatchObject({ enabled: false, connection: { status: 'disabled' } });
    await asker.call('services.update', { id: made.id, set: { args: [fixture, '--tools', '2'] } });
    const second = humanLog.next((e) => e.type === 'approval.requested');
    await human.call('approvals.respond', { id: activation.approval.id, decision: 'approve' });
    const again = (await second) as Extract<WispEvent, { type: 'approval.requested' }>;
    expect(again.approval.summary.arguments).toMatchObject({ configVersion: 2, args: [fixture, '--tools', '2'] });
    await human.call('approvals.respond', { id: again.approval.id, decision: 'approve' });
    expect((await taskEnd(humanLog, task.id)).state.status).toBe('completed');

    const replies = mock.requests.slice(first).map((r) => {
      const last = r.body.messages?.at(-1);
      return last?.role === 'tool' ? (JSON.parse(String(last.content)) as Record<string, unknown>) : {};
    });
    expect(replies[1]).toMatchObject({ services: expect.arrayContaining([expect.objectContaining({ name: 'tools', env: expect.any(Array) })]) });
    expect(replies[2]).toMatchObject({ error: { code: 'INVALID_CONFIG', message: expect.stringContaining('package runner') } });
    expect(replies[3]).toMatchObject({ registered: { name: 'model-made' }, state: 'disabled', note: expect.stringContaining('Nothing was installed or started') });
    expect(replies[4]).toMatchObject({ error: { code: 'APPROVAL_STALE' } });
    expect(replies[5]).toMatchObject({ service: 'model-made', state: { status: 'active' } });
    expect(mock.requests[first]?.body.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(['mcp_list_services', 'mcp_register', 'mcp_activate_service']));
    await asker.call('services.delete', { name: 'model-made' });
  });

  it('refuses a host tool argument it does not take (mcp_register with env) as a tool error the model reads, before any approval is shown', async () => {
    const first = mock.requests.length;
    const arguments_ = { name: 'with-env', command: process.execPath, args: ['server.js'], env: { API_TOKEN: 'from-the-model' } };
    mock.enqueue({ events: toolCallEvents([{ id: 'e', name: 'mcp_register', arguments: JSON.stringify(arguments_) }]) }, { events: textEvents('I could not register it.') });
    const seen = humanLog.events.length;
    const shown = humanLog.next((e) => e.type === 'approval.requested').then((e) => e);
    const { session } = await asker.call('sessions.create', {});
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'register a server with a token' });
    // The task ends without asking anyone (before, the human was shown the env, and it was then dropped).
    const ended = await Promise.race([taskEnd(humanLog, task.id), shown]);
    expect(ended).toMatchObject({ id: task.id, state: { status: 'completed' } });
    const reply = mock.requests[first + 1]?.body.messages?.at(-1);
    expect(reply).toMatchObject({ role: 'tool', tool_call_id: 'e' });
    expect(JSON.parse(String(reply?.content))).toEqual({
      error: { code: 'INVALID_ARGUMENTS', message: 'the arguments do not match the parameters of mcp_register: / must NOT have additional properties ("env"); nothing was run' },
    });
    // Nothing was put before the human, and nothing was saved.
    expect(humanLog.events.slice(seen).filter((e) => e.type === 'approval.requested')).toEqual([]);
    expect((await asker.call('services.list')).services.map((x) => x.name)).not.toContain('with-env');
  });

  it('registers a server with the hosts it may reach, each named in the approval, stored as granted; a host that is not one is refused before anyone is asked (issue 34)', async () => {
    const fixture = (await asker.call('services.get', { name: 'tools' })).service.args[0] ?? '';
    const first = mock.requests.length;
    const good = { name: 'model-net', command: process.execPath, args: [fixture], allowNet: ['API.Example.com', '127.0.0.1:8080'], net: 'ask' };
    mock.enqueue(
      { events: toolCallEvents([{ id: 'h', name: 'mcp_register', arguments: JSON.stringify({ ...good, name: 'model-bad', allowNet: ['evil.example\nwispctl approve all'] }) }]) },
      { events: toolCallEvents([{ id: 'h2', name: 'mcp_register', arguments: JSON.stringify({ ...good, name: 'model-all', net: 'all' }) }]) },
      { events: toolCallEvents([{ id: 'g', name: 'mcp_register', arguments: JSON.stringify(good) }]) },
      { events: textEvents('Registered.') },
    );
    const { session } = await asker.call('sessions.create', {});
    const asked = answerNext('approve');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'register a server that calls an API' });
    const { approval } = await asked;
    // The first approval is the good one's: the two refusals asked nobody.
    expect(approval).toMatchObject({ kind: 'registration', summary: { arguments: good, title: expect.stringContaining('it will run sandboxed: asks you before each new host (api.example.com, 127.0.0.1:8080 granted), its cwd') } });
    expect((await taskEnd(humanLog, task.id)).state.status).toBe('completed');
    const replies = mock.requests.slice(first + 1, first + 4).map((r) => JSON.parse(String(r.body.messages?.at(-1)?.content)) as Record<string, unknown>);
    expect(replies[0]).toEqual({ error: { code: 'INVALID_PARAMS', message: expect.stringMatching(/^allowNet\[0\]: /) } });
    expect(replies[1]).toEqual({ error: { code: 'INVALID_PARAMS', message: 'net "all" already reaches every host: give allowNet with net "none" or "ask" instead' } });
    expect(replies[2]).toMatchObject({ registered: { name: 'model-net' }, state: 'disabled' });
    const names = (await asker.call('services.list')).services.map((x) => x.name);
    expect(names).toContain('model-net');
    expect(names).not.toContain('model-bad');
    expect(names).not.toContain('model-all');
    expect((await asker.call('services.get', { name: 'model-net' })).service.sandbox).toMatchObject({ status: 'on', net: { mode: 'ask', hosts: ['api.example.com', '127.0.0.1:8080'] } });
    await asker.call('services.delete', { name: 'model-net' });
  });
});

describe('deferred tools', () => {
  it('offers search and execute instead of 96 tools, with the same approvals', async () => {
    const many = await registerScenario(asker, 'many', ['--tools', '62']);
    await activate(asker, 'many');
    const total = (await asker.call('daemon.status')).counts.activeTools;
    const more = await registerScenario(asker, 'more', ['--tools', String(96 - total - 2)]);
    await activate(asker, 'more');
    expect((await asker.call('daemon.status')).counts.activeTools).toBe(96);
    const target = (await asker.call('tools.list', { serviceId: many.id })).tools.find((t) => t.name === 'tool-41');
    const first = mock.requests.length;
    mock.enqueue(
      { events: toolCallEvents([{ id: 's', name: 'mcp_search_tools', arguments: '{"query":"number 41"}' }]) },
      { events: toolCallEvents([{ id: 'x', name: 'mcp_execute_tool', arguments: JSON.stringify({ name: target?.modelName, arguments: { n: 41 } }) }]) },
      { events: textEvents('tool-41 said hello') },
    );
    const { session } = await asker.call('sessions.create', {});
    const answered = answerNext('approve');
    const { task } = await asker.call('sessions.send', { id: session.id, text: 'use tool number 41' });
    expect(task.tools).toHaveLength(96);
    const approval = await answered;
    expect(approval.approval.summary).toMatchObject({ serviceName: 'many', toolName: 'tool-41', arguments: { n: 41 } });
    expect((await taskEnd(humanLog, task.id)).state.status).toBe('completed');
    const requests = mock.requests.slice(first);
    expect(requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(['mcp_search_tools', 'mcp_execute_tool', 'mcp_list_services', 'mcp_register', 'mcp_install_npm', 'mcp_activate_service']);
    const found = JSON.parse(String(requests[1]?.body.messages?.at(-1)?.content)) as { tools: { name: string; tool: string }[] };
    expect(found.tools[0]).toMatchObject({ name: target?.modelName, tool: 'tool-41' });
    expect(requests[2]?.body.messages?.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'x', content: 'tool-41 called' });
    await asker.call('services.delete', { id: many.id });
    await asker.call('services.delete', { id: more.id });
  });
});

describe('sessions across a restart', () => {
  it('keeps transcripts and marks a task that was running as interrupted', async () => {
    const dir = tempDir();
    const local = new MockDeepSeek();
    try {
      const url = await local.start();
      const first = await startWispd(dir.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'k' }) });
      const c1 = await first.connect();
      const log1 = await EventLog.follow(c1);
      await c1.call('model.setSettings', { baseUrl: url });
      local.enqueue({ events: textEvents('remembered answer') }, { events: [...textEvents('cut short').slice(0, 2), { stall: true }] });
      const { session } = await c1.call('sessions.create', { title: 'durable' });
      const { task: done } = await c1.call('sessions.send', { id: session.id, text: 'first' });
      await taskEnd(log1, done.id);
      const { task: running } = await c1.call('sessions.send', { id: session.id, text: 'second' });
      await log1.waitFor((e) => e.type === 'model.delta' && e.taskId === running.id);
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await startWispd(dir.path, { env: daemonEnv({ DEEPSEEK_API_KEY: 'k' }) });
      const c2 = await second.connect();
      const again = await c2.call('sessions.get', { id: session.id });
      expect(again.session.title).toBe('durable');
      expect(again.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'first'],
        ['assistant', 'remembered answer'],
        ['user', 'second'],
      ]);
      expect(again.tasks.map((t) => t.state.status)).toEqual(['completed', 'interrupted']);
      await c2.call('daemon.shutdown');
      await second.exited;
    } finally {
      await local.stop();
      dir.remove();
    }
  });
});
