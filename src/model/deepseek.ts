import { createParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { WispError, type ErrorCode } from '../core/index.js';
import type { ModelMessage, ToolCallWire, ToolDefinition, Turn, Usage } from './wire.js';

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
  messages: readonly ModelMessage[],
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
  // Loaded with the first model request: a daemon that never runs a session never loads undici.
  const { request } = await import('undici');
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

type Chunk = {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: unknown[] }; finish_reason?: string | null }[];
  usage?: Usage | null;
};

/** One turn, assembled from the stream's data lines as they come. */
class TurnAssembly {
  content = '';
  reasoning: string | null = null;
  finishReason: string | null = null;
  usage: Usage | null = null;
  done = false;
  sawData = false;
  failure: WispError | undefined;
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  constructor(private readonly handlers: TurnHandlers) {}

  /** One `data:` line of the stream. */
  onData(data: string): void {
    if (this.failure !== undefined || this.done) return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      this.failure = new WispError('MODEL_PROTOCOL', `the model stream carried a malformed data line: ${JSON.stringify(data.slice(0, 80))}`);
      return;
    }
    this.sawData = true;
    this.onChunk(chunk as Chunk);
  }

  private onChunk(c: Chunk): void {
    if (c.usage !== undefined && c.usage !== null) this.usage = c.usage;
    const choice = c.choices?.[0];
    if (choice === undefined) return;
    const delta = choice.delta ?? {};
    // In thinking mode the field is present (even empty) and must be passed back later;
    // a model without thinking never sends it, and then nothing is passed back.
    if (typeof delta.reasoning_content === 'string') {
      this.reasoning = (this.reasoning ?? '') + delta.reasoning_content;
      if (delta.reasoning_content !== '') this.handlers.onReasoning?.(delta.reasoning_content);
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.content += delta.content;
      this.handlers.onContent?.(delta.content);
    }
    for (const raw of delta.tool_calls ?? []) this.onToolCallFragment(raw);
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
  }

  private onToolCallFragment(raw: unknown): void {
    const fragment = raw as { index?: number; id?: string; function?: { name?: string; arguments?: string } };
    const index = typeof fragment.index === 'number' ? fragment.index : 0;
    const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (typeof fragment.id === 'string' && fragment.id !== '') call.id = fragment.id;
    if (typeof fragment.function?.name === 'string' && fragment.function.name !== '') call.name = fragment.function.name;
    if (typeof fragment.function?.arguments === 'string') call.arguments += fragment.function.arguments;
    this.calls.set(index, call);
  }

  /** The turn, once the stream has ended: refused (MODEL_TRUNCATED) unless it ended with [DONE]. */
  turn(): Turn {
    if (!this.done) {
      throw new WispError(
        'MODEL_TRUNCATED',
        this.calls.size > 0 && this.finishReason === null ? 'the model stream ended in the middle of a tool call' : 'the model stream ended without [DONE]',
      );
    }
    const toolCalls: ToolCallWire[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ id: call.id === '' ? `call_${index}` : call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
    return { content: this.content, reasoning: this.reasoning, toolCalls, finishReason: this.finishReason, usage: this.usage };
  }
}

async function readStream(response: Dispatcher.ResponseData, settings: ModelSettings, handlers: TurnHandlers, signal: AbortSignal): Promise<Turn> {
  const turn = new TurnAssembly(handlers);
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent: (event) => turn.onData(event.data),
    onError: (error) => {
      turn.failure ??= new WispError('MODEL_PROTOCOL', `the model stream could not be parsed: ${error.message}`);
    },
  });

  // One timer: the first-byte deadline until data flows, then the idle timeout. Any bytes,
  // keep-alive comments included, count as life.
  const watchdog = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    const ms = turn.sawData ? settings.idleTimeoutMs : settings.firstByteTimeoutMs;
    timer = setTimeout(() => {
      turn.failure ??= new WispError('MODEL_STALLED', turn.sawData ? `the model stream was silent for ${ms} ms` : `no answer from the model within ${ms} ms`);
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
      if (turn.failure !== undefined) break;
      if (turn.done) break;
    }
  } catch (error) {
    if (signal.aborted) throw cancelled();
    if (turn.failure === undefined) {
      throw new WispError('MODEL_UNAVAILABLE', `the model stream broke off: ${describeNetworkError(error)}`);
    }
  } finally {
    clearTimeout(timer);
    watchdog.signal.removeEventListener('abort', onAbort);
    signal.removeEventListener('abort', onAbort);
    response.body.destroy();
  }
  if (signal.aborted) throw cancelled();
  if (turn.failure !== undefined) throw turn.failure;
  return turn.turn();
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
