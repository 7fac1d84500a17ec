import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { cachedTokens, MockDeepSeek, promptText, textEvents, type RecordedRequest } from '../../fixtures/model/mock-deepseek.mjs';
import { activate, EventLog, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * The provider's prefix cache across tasks (issue 36): the mock counts prompt-cache hits the
 * way DeepSeek does (the part of a prompt that repeats an earlier one, in 64-token units), and
 * the daemon sends a task's tools in one order whatever order their services were activated
 * in, so a new task after a restart reuses everything up to its own question.
 */
const mock = new MockDeepSeek();
const home = tempDir();
const env = daemonEnv({ DEEPSEEK_API_KEY: 'sk-prefix-cache' });
let daemon: RunningDaemon | undefined;

beforeAll(async () => {
  const url = await mock.start();
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'], env });
  const client = await daemon.connect();
  await client.call('model.setSettings', { baseUrl: url, model: 'mock-model', maxRetries: 0, idleTimeoutMs: 5000, firstByteTimeoutMs: 5000 });
  await registerScenario(client, 'cache-b', ['--tools', '3']);
  await registerScenario(client, 'cache-a', ['--tools', '3']);
});
afterAll(async () => {
  if (daemon !== undefined) {
    const client = await daemon.connect();
    await client.call('daemon.shutdown').catch(() => undefined);
    await daemon.exited;
  }
  await mock.stop();
  killLeftovers();
  home.remove();
});

type Usage = { prompt_tokens: number; prompt_cache_hit_tokens: number; prompt_cache_miss_tokens: number };

/** One task in a new session: the request the mock received, and the usage the clients were told (model.turn). */
async function task(client: WispClient, log: EventLog, text: string): Promise<{ sessionId: string; request: RecordedRequest; usage: Usage }> {
  const first = mock.requests.length;
  mock.enqueue({ events: textEvents('ok') });
  const { session } = await client.call('sessions.create', {});
  const { task: started } = await client.call('sessions.send', { id: session.id, text });
  const turn = (await log.waitFor((e) => e.type === 'model.turn' && e.taskId === started.id)) as Extract<WispEvent, { type: 'model.turn' }>;
  await log.waitFor((e) => e.type === 'task.state' && e.task.id === started.id && e.task.state.status === 'completed');
  const request = mock.requests[first];
  if (request === undefined) throw new Error('the mock received no request for the task');
  return { sessionId: session.id, request, usage: turn.usage as Usage };
}

/** Where the tools end in the prompt the cache reads (the system prompt, then the tools). */
function toolsEnd(request: RecordedRequest): number {
  const tools = JSON.stringify(request.body.tools);
  return promptText(request.body).indexOf(tools) + tools.length;
}

describe('the provider\'s prefix cache', () => {
  it('a task after a restart, its services activated in the other order, sends the same tools and hits the cache up to its question', { timeout: 60_000 }, async () => {
    if (daemon === undefined) throw new Error('no daemon');
    let client = await daemon.connect();
    let log = await EventLog.follow(client);
    await activate(client, 'cache-b');
    await activate(client, 'cache-a');
    const before = await task(client, log, 'first question');
    // The first prompt the provider sees: nothing of it is cached.
    expect(before.usage).toMatchObject({ prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: before.usage.prompt_tokens });

    await client.call('daemon.shutdown');
    await daemon.exited;
    daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'], env });
    client = await daemon.connect();
    log = await EventLog.follow(client);
    // Nothing restarts by itself; this time cache-a is trusted and started first.
    await activate(client, 'cache-a');
    await activate(client, 'cache-b');
    const after = await task(client, log, 'second question');

    // The provider reused the system prompt and every tool: what it reports as cache hits (and
    // the clients are told) covers the prompt up to this task's question, in whole 64-token units.
    const shared = promptText(after.request.body).indexOf('second question');
    expect(shared).toBeGreaterThan(toolsEnd(after.request));
    expect(after.usage.prompt_cache_hit_tokens).toBe(cachedTokens(shared));
    expect(after.usage.prompt_cache_hit_tokens).toBeGreaterThanOrEqual(cachedTokens(toolsEnd(after.request)));
    expect(after.usage.prompt_cache_miss_tokens).toBe(after.usage.prompt_tokens - after.usage.prompt_cache_hit_tokens);
    // And a person reading the event stream is told so.
    const events = await runWispctl(['--socket', daemon.socket, 'events']);
    const line = events.stdout.split('\n').find((l) => l.includes('model.turn') && l.includes(after.sessionId));
    expect(line).toContain(`round 1 stop, ${after.usage.prompt_tokens} prompt tokens (${after.usage.prompt_cache_hit_tokens} from the prompt cache)`);
    // Because the tools are the same, byte for byte, in the same order (by model name).
    const sent = JSON.stringify(after.request.body.tools);
    expect(sent).toBe(JSON.stringify(before.request.body.tools));
    const names = (after.request.body.tools ?? []).map((t) => t.function.name).filter((n) => /^mcp_[0-9a-f]{12}_[0-9a-f]{16}$/.test(n));
    expect(names).toHaveLength(10);
    expect(names).toEqual([...names].sort());
  });
});
