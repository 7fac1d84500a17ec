import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_SETTINGS, streamTurn, type ModelSettings } from '../../../src/model/index.js';
import { cachedTokens, MockDeepSeek, promptText, textEvents, toolCallEvents } from '../../../fixtures/model/mock-deepseek.mjs';

const mock = new MockDeepSeek();
let settings: ModelSettings;
const user = [{ role: 'user' as const, content: 'hi' }];
const tools = [{ type: 'function' as const, function: { name: 'mcp_aaaaaaaaaaaa_bbbbbbbbbbbbbbbb', description: 'd', parameters: { type: 'object' } } }];

beforeAll(async () => {
  settings = { ...DEFAULT_MODEL_SETTINGS, baseUrl: await mock.start(), model: 'mock-model', retryBaseMs: 1, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 };
});
afterAll(() => mock.stop());
beforeEach(() => mock.clear());

function turn(options: Partial<ModelSettings> = {}, signal = new AbortController().signal) {
  const seen: string[] = [];
  const promise = streamTurn({ ...settings, ...options }, 'sk-test', user, tools, { onReasoning: (t) => seen.push(`r:${t}`), onContent: (t) => seen.push(`c:${t}`) }, signal);
  return { promise, seen };
}

describe('DeepSeek adapter', () => {
  it('streams reasoning then content, with usage, and sends what the API expects', async () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 10 };
    mock.enqueue({ events: textEvents('Hello there', { reasoning: 'thinking', pieces: 2, usage }) });
    const before = mock.requests.length;
    const { promise, seen } = turn();
    const result = await promise;
    expect(result).toMatchObject({ content: 'Hello there', reasoning: 'thinking', toolCalls: [], finishReason: 'stop', usage });
    expect(seen).toEqual(['r:thinking', 'c:Hello ', 'c:there']);
    const request = mock.requests[before];
    expect(request?.path).toBe('/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toMatchObject({ model: 'mock-model', stream: true, stream_options: { include_usage: true }, messages: user, tools });
  });

  it('passes no reasoning back for a model that does not think (no reasoning_content field at all)', async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ data: { choices: [{ index: 0, delta, finish_reason: finish }] } });
    mock.enqueue({ events: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'plain' }), chunk({}, 'stop'), { done: true }] });
    expect(await turn().promise).toMatchObject({ content: 'plain', reasoning: null });
  });

  it.each([
    ['two-newline keep-alives', { keepAliveNewline: '\n\n' }],
    ['one-newline keep-alives', { keepAliveNewline: '\n' }],
    ['CRLF line endings', { crlf: true }],
    ['1-byte writes', { splitBytes: 1 }],
    ['7-byte writes', { splitBytes: 7 }],
  ])('copes with %s', async (_name, framing) => {
    mock.enqueue({ ...framing, events: [{ comment: 'keep-alive' }, { comment: 'keep-alive' }, ...textEvents('é✓ ok', { reasoning: 'ü' })] });
    expect(await turn().promise).toMatchObject({ content: 'é✓ ok', reasoning: 'ü', finishReason: 'stop' });
  });

  it('assembles tool arguments split into 1-byte pieces and mid-UTF-8', async () => {
    const args = JSON.stringify({ path: '/tmp/ünïcödé ✓.txt', note: 'quote " and \\ backslash' });
    mock.enqueue({ splitBytes: 1, events: toolCallEvents([{ id: 'call_1', name: 'read', arguments: args }], { argPiece: 1, reasoning: 'r' }) });
    const result = await turn().promise;
    expect(result.toolCalls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'read', arguments: args } }]);
    expect(result.finishReason).toBe('tool_calls');
  });

  it.each([false, true])('assembles two parallel calls (interleaved: %s) by index, with text in the same turn', async (interleave) => {
    const a = JSON.stringify({ n: 1 });
    const b = JSON.stringify({ n: 2, s: 'two' });
    mock.enqueue({ events: toolCallEvents([{ id: 'a', name: 'first', arguments: a }, { id: 'b', name: 'second', arguments: b }], { interleave, argPiece: 2, content: 'Let me check.' }) });
    const result = await turn().promise;
    expect(result.content).toBe('Let me check.');
    expect(result.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['a', 'first', a],
      ['b', 'second', b],
    ]);
  });

  it('keeps invalid assembled arguments as raw text for the caller to report', async () => {
    mock.enqueue({ events: toolCallEvents([{ id: 'x', name: 'broken', arguments: '{"a": 1,,' }]) });
    const result = await turn().promise;
    expect(result.toolCalls[0]?.function.arguments).toBe('{"a": 1,,');
  });

  it('reads usage from a separate chunk, or does without', async () => {
    const separate = textEvents('x', { usage: null });
    separate.splice(separate.length - 1, 0, { data: { id: 'u', object: 'chat.completion.chunk', choices: [], usage: { total_tokens: 99 } } });
    mock.enqueue({ events: separate });
    expect((await turn().promise).usage).toEqual({ total_tokens: 99 });
    mock.enqueue({ events: textEvents('x', { usage: null }) });
    expect((await turn().promise).usage).toBeNull();
  });

  it('passes on the prompt-cache tokens the API counts: a prefix repeated from an earlier request (the tools) is a hit', async () => {
    const described = [{ type: 'function' as const, function: { name: 'mcp_aaaaaaaaaaaa_cccccccccccccccc', description: 'A tool described at length. '.repeat(40), parameters: { type: 'object' } } }];
    const ask = (content: string) => streamTurn(settings, 'sk-test', [{ role: 'user', content }], described, { onReasoning: () => undefined, onContent: () => undefined }, new AbortController().signal);
    mock.enqueue({ events: textEvents('one') }, { events: textEvents('two') });
    const first = await ask('first question');
    const second = await ask('second question');
    // The two prompts are the same up to the question: that much, in whole 64-token units, is a hit.
    const shared = promptText(mock.requests.at(-1)?.body ?? {}).indexOf('second question');
    expect(cachedTokens(shared)).toBeGreaterThanOrEqual(256);
    expect(first.usage).toMatchObject({ prompt_cache_hit_tokens: 0 });
    expect(second.usage).toMatchObject({ prompt_cache_hit_tokens: cachedTokens(shared) });
    const { prompt_tokens: total = 0, prompt_cache_miss_tokens: missed = 0 } = second.usage ?? {};
    expect(missed).toBe(total - cachedTokens(shared));
  });

  it.each(['stop', 'length', 'content_filter', 'insufficient_system_resource', 'aborted'])('reports finish_reason %s', async (finish) => {
    mock.enqueue({ events: textEvents('partial', { finish }) });
    expect((await turn().promise).finishReason).toBe(finish);
  });

  it('fails with MODEL_TRUNCATED when [DONE] never comes, or the stream ends mid tool call', async () => {
    mock.enqueue({ events: textEvents('cut', { done: false }) });
    await expect(turn().promise).rejects.toMatchObject({ code: 'MODEL_TRUNCATED', message: 'the model stream ended without [DONE]' });
    const mid = toolCallEvents([{ id: 'c', name: 'n', arguments: '{"long": "argument"}' }], { done: false });
    mock.enqueue({ events: mid.slice(0, 3) });
    await expect(turn().promise).rejects.toMatchObject({ code: 'MODEL_TRUNCATED', message: 'the model stream ended in the middle of a tool call' });
  });

  it('fails with MODEL_STALLED on a silent stall mid-stream (idle timer)', async () => {
    mock.enqueue({ events: [...textEvents('never finished').slice(0, 2), { stall: true }] });
    await expect(turn({ idleTimeoutMs: 200 }).promise).rejects.toMatchObject({ code: 'MODEL_STALLED', message: 'the model stream was silent for 200 ms' });
  });

  it('fails with MODEL_STALLED when nothing at all arrives before the first-byte deadline', async () => {
    mock.enqueue({ events: [{ stall: true }] });
    await expect(turn({ firstByteTimeoutMs: 200 }).promise).rejects.toMatchObject({ code: 'MODEL_STALLED', message: 'no answer from the model within 200 ms' });
  });

  it('fails with MODEL_UNAVAILABLE on a reset mid-stream, and does not retry once data has flowed', async () => {
    const before = mock.requests.length;
    mock.enqueue({ events: [...textEvents('partial answer').slice(0, 3), { reset: true }] }, { events: textEvents('should never be asked for') });
    await expect(turn().promise).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect(mock.requests.length - before).toBe(1);
  });

  it('fails with MODEL_PROTOCOL on a malformed data line', async () => {
    mock.enqueue({ events: [...textEvents('x').slice(0, 1), { data: '{not json' }, { done: true }] });
    await expect(turn().promise).rejects.toMatchObject({ code: 'MODEL_PROTOCOL' });
  });

  it.each([
    ['with Retry-After', { 'retry-after': '0' }],
    ['without Retry-After', {}],
  ])('retries a 429 before the stream starts (%s)', async (_name, headers) => {
    const before = mock.requests.length;
    mock.enqueue({ status: 429, headers, body: { error: { message: 'Rate limit reached' } } }, { events: textEvents('after retry') });
    expect((await turn().promise).content).toBe('after retry');
    expect(mock.requests.length - before).toBe(2);
  });

  it.each([
    [500, { error: { message: 'Internal error', type: 'server_error' } }, 'MODEL_UNAVAILABLE', 'Internal error'],
    [503, { error: { message: 'Server overloaded' } }, 'MODEL_UNAVAILABLE', 'Server overloaded'],
    [502, '<html><body><h1>502 Bad Gateway</h1></body></html>', 'MODEL_UNAVAILABLE', '502 Bad Gateway'],
    [400, { error: { message: 'The `reasoning_content` in the thinking mode must be passed back to the API.' } }, 'MODEL_BAD_REQUEST', 'reasoning_content'],
    [401, { error: { message: 'Authentication Fails' } }, 'MODEL_AUTH', 'Authentication Fails'],
    [402, { error: { message: 'Insufficient Balance' } }, 'MODEL_BALANCE', 'Insufficient Balance'],
    [422, 'Failed to deserialize the JSON body', 'MODEL_BAD_REQUEST', 'Failed to deserialize'],
  ])('maps HTTP %i to %s with the API\'s own message', async (status, body, code, text) => {
    mock.enqueue({ status, body });
    const error = await turn({ maxRetries: 0 }).promise.catch((e: unknown) => e);
    expect(error).toMatchObject({ code, details: { status } });
    expect((error as Error).message).toContain(text);
  });

  it('gives up after the retries and says why', async () => {
    const before = mock.requests.length;
    mock.enqueue({ status: 503, body: { error: { message: 'busy' } } }, { status: 503, body: { error: { message: 'busy' } } }, { status: 503, body: { error: { message: 'still busy' } } });
    await expect(turn({ maxRetries: 2 }).promise).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('still busy') });
    expect(mock.requests.length - before).toBe(3);
  });

  it('fails with MODEL_UNAVAILABLE when nothing listens', async () => {
    await expect(turn({ baseUrl: 'http://127.0.0.1:9', maxRetries: 1 }).promise).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('ECONNREFUSED') });
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    mock.enqueue({ events: [...textEvents('slow').slice(0, 2), { stall: true }] });
    const { promise, seen } = turn({}, controller.signal);
    const outcome = promise.catch((e: unknown) => e);
    controller.abort();
    expect(await outcome).toMatchObject({ code: 'CANCELLED' });
    expect(seen.join('')).not.toContain('slow');
  });
});
