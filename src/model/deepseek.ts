import { createParser } from 'eventsource-parser';
import { request, type Dispatcher } from 'undici';
import { WispError, type ErrorCode } from '../core/index.js';
import type { ChatMessage, ToolCallWire, ToolDefinition, Turn, Usage } from './wire.js';

export interface ModelSettings {
  /** e.g. https://api.deepseek.com (a /v1 or /beta suffix is kept as given). */
  readonly baseUrl: string;
  readonly model: string;
  /** Until the first byte of the body; keep-alive comments count as life. */
  readonly firstByteTimeoutMs: number;
  /** Between chunks once the stream has started. */
  readonly idleTimeoutMs: number;
  /** Retries of 429/5xx/connection errors, only before any data has arrived. */
  readonly maxRetries: number;
  readonly retryBaseMs: number;
  /** Above this many tools a task offers two tools instead: search and execute (deferred mode). */
  readonly deferToolsAbove: number;
}

export const DEFAULT_MODEL_SETTINGS: ModelSettings = {
  baseUrl: 'https://api.deepseek.com',
  model: 'deepseek-chat',
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  maxRetries: 2,
  retryBaseMs: 500,
  deferToolsAbove: 40,
};

export interface TurnHandlers {
  onReasoning?(text: string): void;
  onContent?(text: string): void;
}

/** One SSE event's data may not exceed this; a frame that does is a protocol error. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Streams one /chat/completions turn. Retries only before any data has arrived (never after:
 * the model may already have acted on it). Rejects with a WispError whose code says what
 * went wrong (MODEL_AUTH, MODEL_RATE_LIMITED, MODEL_STALLED, MODEL_TRUNCATED, ...).
 */
export async function streamTurn(
  settings: ModelSettings,
  apiKey: string,
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[],
  handlers: TurnHandlers,
  signal: AbortSignal,
): Promise<Turn> {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const body = JSON.stringify({
    model: settings.model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    stream: true,
    stream_options: { include_usage: true },
  });
  for (let attempt = 0; ; attempt++) {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${apiKey}` },
        body,
        signal,
        headersTimeout: settings.firstByteTimeoutMs,
        bodyTimeout: 0, // our own timers below: keep-alives count as life, undici's would not know
      });
    } catch (error) {
      if (signal.aborted) throw cancelled();
      const failure = new WispError('MODEL_UNAVAILABLE', `could not reach the model API: ${describeNetworkError(error)}`);
      if (attempt < settings.maxRetries) {
        await backoff(settings, attempt, undefined, signal);
        continue;
      }
      throw failure;
    }
    if (response.statusCode !== 200) {
      const text = await response.body.text().catch(() => '');
      const failure = httpError(response.statusCode, text);
      const retryable = response.statusCode === 408 || response.statusCode === 409 || response.statusCode === 429 || response.statusCode >= 500;
      if (retryable && attempt < settings.maxRetries) {
        await backoff(settings, attempt, retryAfterMs(response.headers['retry-after']), signal);
        continue;
      }
      throw failure;
    }
    return readStream(response, settings, handlers, signal);
  }
}

async function readStream(response: Dispatcher.ResponseData, settings: ModelSettings, handlers: TurnHandlers, signal: AbortSignal): Promise<Turn> {
  let content = '';
  let reasoning: string | null = null;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  // Assigned from the parser's callbacks; the casts keep the compiler from assuming the
  // initial values still hold after feed().
  let finishReason = null as string | null;
  let usage: Usage | null = null;
  let done = false as boolean;
  let sawData = false;
  let failure = undefined as WispError | undefined;

  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent(event) {
      if (failure !== undefined || done) return;
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        failure = new WispError('MODEL_PROTOCOL', `the model stream carried a malformed data line: ${JSON.stringify(event.data.slice(0, 80))}`);
        return;
      }
      sawData = true;
      const c = chunk as {
        choices?: { delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: unknown[] }; finish_reason?: string | null }[];
        usage?: Usage | null;
      };
      if (c.usage !== undefined && c.usage !== null) usage = c.usage;
      const choice = c.choices?.[0];
      if (choice === undefined) return;
      const delta = choice.delta ?? {};
      // In thinking mode the field is present (even empty) and must be passed back later;
      // a model without thinking never sends it, and then nothing is passed back.
      if (typeof delta.reasoning_content === 'string') {
        reasoning = (reasoning ?? '') + delta.reasoning_content;
        if (delta.reasoning_content !== '') handlers.onReasoning?.(delta.reasoning_content);
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        content += delta.content;
        handlers.onContent?.(delta.content);
      }
      for (const raw of delta.tool_calls ?? []) {
        const fragment = raw as { index?: number; id?: string; function?: { name?: string; arguments?: string } };
        const index = typeof fragment.index === 'number' ? fragment.index : 0;
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        if (typeof fragment.id === 'string' && fragment.id !== '') call.id = fragment.id;
        if (typeof fragment.function?.name === 'string' && fragment.function.name !== '') call.name = fragment.function.name;
        if (typeof fragment.function?.arguments === 'string') call.arguments += fragment.function.arguments;
        calls.set(index, call);
      }
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
    },
    onError(error) {
      failure ??= new WispError('MODEL_PROTOCOL', `the model stream could not be parsed: ${error.message}`);
    },
  });

  // One timer: the first-byte deadline until data flows, then the idle timeout. Any bytes,
  // keep-alive comments included, count as life.
  const watchdog = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    const ms = sawData ? settings.idleTimeoutMs : settings.firstByteTimeoutMs;
    timer = setTimeout(() => {
      failure ??= new WispError(
        'MODEL_STALLED',
        sawData ? `the model stream was silent for ${ms} ms` : `no answer from the model within ${ms} ms`,
      );
      watchdog.abort();
    }, ms);
  };
  const onAbort = (): void => {
    response.body.destroy();
  };
  watchdog.signal.addEventListener('abort', onAbort);
  signal.addEventListener('abort', onAbort);
  arm();
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const bytes of response.body) {
      parser.feed(decoder.decode(bytes as Buffer, { stream: true }));
      arm(); // after feeding: the first data switches the deadline to the idle timeout
      if (failure !== undefined) break;
      if (done) break;
    }
  } catch (error) {
    if (signal.aborted) throw cancelled();
    if (failure === undefined) {
      throw new WispError('MODEL_UNAVAILABLE', `the model stream broke off: ${describeNetworkError(error)}`);
    }
  } finally {
    clearTimeout(timer);
    watchdog.signal.removeEventListener('abort', onAbort);
    signal.removeEventListener('abort', onAbort);
    response.body.destroy();
  }
  if (signal.aborted) throw cancelled();
  if (failure !== undefined) throw failure;
  if (!done) {
    throw new WispError(
      'MODEL_TRUNCATED',
      calls.size > 0 && finishReason === null ? 'the model stream ended in the middle of a tool call' : 'the model stream ended without [DONE]',
    );
  }
  const toolCalls: ToolCallWire[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({ id: call.id === '' ? `call_${index}` : call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
  return { content, reasoning, toolCalls, finishReason, usage };
}

function httpError(status: number, body: string): WispError {
  const detail = errorDetail(body);
  const code: ErrorCode =
    status === 401 ? 'MODEL_AUTH'
    : status === 402 ? 'MODEL_BALANCE'
    : status === 429 ? 'MODEL_RATE_LIMITED'
    : status === 400 || status === 422 ? 'MODEL_BAD_REQUEST'
    : 'MODEL_UNAVAILABLE';
  return new WispError(code, `the model API answered HTTP ${status}${detail !== '' ? `: ${detail}` : ''}`, { status });
}

/** The API's own explanation: a JSON error body, or the start of a plain-text or HTML page. */
function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message.slice(0, 500);
  } catch {
    // not JSON
  }
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Exponential backoff with jitter; a short Retry-After is honoured, a long one is capped. */
async function backoff(settings: ModelSettings, attempt: number, retryAfter: number | undefined, signal: AbortSignal): Promise<void> {
  const exponential = settings.retryBaseMs * 2 ** attempt;
  const wait = retryAfter !== undefined && retryAfter <= 10_000 ? retryAfter : exponential + Math.random() * exponential * 0.5;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, wait);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(cancelled());
      },
      { once: true },
    );
  });
}

function describeNetworkError(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error);
}

function cancelled(): WispError {
  return new WispError('CANCELLED', 'the model request was cancelled');
}
