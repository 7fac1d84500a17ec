import { LIMITS, type LogLevel } from '../core/index.js';
import type { CallRef, McpEvent, ServerNotice } from './events.js';

type ServiceRef = { readonly id: string; readonly name: string };

/** A server's notifications/message, as the SDK parsed it (its level checked). */
export interface LogParams {
  readonly level: LogLevel;
  readonly logger?: string | undefined;
  readonly data?: unknown;
}

/** What one connection hands on of what its server says of its own accord (notice-handlers.ts installs it on the SDK's Client). */
export interface NoticeSink {
  log(params: LogParams): void;
  updated(uri: string): void;
  listChanged(list: 'resources' | 'prompts'): void;
}

/** The redactor's two calls used here. */
export interface NoticeRedactor {
  redactValue<T>(value: T): T;
  redactEdges(text: string, edges: { start?: boolean; end?: boolean }): string;
}

/** A service's notices in the current second: how many went out, how many were dropped, and what waits for the second's end. */
interface Window {
  start: number;
  sent: number;
  dropped: number;
  /** Resource and list changes held back in a full second, by what they are of (the same change twice is one). */
  readonly held: Map<string, ServerNotice>;
  timer: NodeJS.Timeout | null;
}

const WINDOW_MS = 1000;
const MAX_URI_CHARS = 2048;
/** A logger's name is cut to this (after redaction). */
const MAX_LOGGER_CHARS = 128;

/**
 * What servers say of their own accord, made into events (the daemon's bridge): their log
 * messages (redacted, cut, and labelled with the call they came during when that is
 * certain: the one call of that service running then), a resource changed (only one some
 * client subscribed to: `subscribed`) and a list changed. Each service has at most
 * LIMITS.maxLogMessagesPerSecond of them a second: past it, log messages are dropped and
 * counted (an event with no data says how many, at the second's end) and changes are held to
 * the second's end (the same change once). A flooding server costs the daemon a parse and a
 * count per message, and its clients nothing.
 */
export class ServerNotices {
  private readonly windows = new Map<string, Window>();
  /** The calls running on each service (call.started until call.finished or call.failed). */
  private readonly running = new Map<string, Map<string, CallRef>>();

  constructor(
    private readonly publish: (event: McpEvent) => void,
    private readonly redactor: NoticeRedactor,
    private readonly subscribed: (serviceId: string, uri: string) => boolean,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The sink for one service's connection; its name is read at each notice (a rename moves it). */
  sink(service: ServiceRef): NoticeSink {
    const ref = (): ServiceRef => ({ id: service.id, name: service.name });
    return {
      log: (params) => this.log(ref(), params),
      updated: (uri) => {
        if (typeof uri === 'string' && uri.length <= MAX_URI_CHARS && this.subscribed(service.id, uri)) this.change({ kind: 'resource.updated', service: ref(), uri });
      },
      listChanged: (list) => this.change({ kind: 'offerings.changed', service: ref(), changed: list }),
    };
  }

  /** Follows the calls (the bus's events), for the call a log message came during; forgets a deleted service. */
  observe(event: McpEvent): void {
    if (event.kind === 'call.started') {
      const calls = this.running.get(event.call.service.id) ?? new Map<string, CallRef>();
      this.running.set(event.call.service.id, calls.set(event.call.callId, event.call));
    } else if (event.kind === 'call.finished' || event.kind === 'call.failed') {
      const calls = this.running.get(event.call.service.id);
      calls?.delete(event.call.callId);
      if (calls?.size === 0) this.running.delete(event.call.service.id);
    } else if (event.kind === 'service.deleted') {
      const window = this.windows.get(event.service.id);
      if (window?.timer != null) clearTimeout(window.timer);
      this.windows.delete(event.service.id);
    }
  }

  private log(service: ServiceRef, params: LogParams): void {
    const window = this.windowOf(service.id);
    if (!this.admit(window, service)) {
      window.dropped += 1;
      return;
    }
    const calls = this.running.get(service.id);
    const call = calls?.size === 1 ? ([...calls.values()][0] ?? null) : null;
    const { data, truncated } = this.dataText(params.data);
    const logger = typeof params.logger === 'string' ? this.cut(params.logger, MAX_LOGGER_CHARS).text : null;
    this.publish({ kind: 'server.log', service, level: params.level, logger, data, truncated, dropped: window.dropped, call });
    window.dropped = 0;
  }

  /** A change goes out now, or (a full second) once at its end. */
  private change(notice: ServerNotice): void {
    const window = this.windowOf(notice.service.id);
    if (this.admit(window, notice.service)) this.publish(notice);
    else window.held.set(notice.kind === 'resource.updated' ? `uri:${notice.uri}` : `list:${notice.kind === 'offerings.changed' ? notice.changed : ''}`, notice);
  }

  private windowOf(serviceId: string): Window {
    let window = this.windows.get(serviceId);
    if (window === undefined) {
      window = { start: this.clock(), sent: 0, dropped: 0, held: new Map(), timer: null };
      this.windows.set(serviceId, window);
    }
    return window;
  }

  /** Whether one more notice may go out this second; when not, the second's end is waited for (to count and flush). */
  private admit(window: Window, service: ServiceRef): boolean {
    const now = this.clock();
    if (window.timer === null && now - window.start >= WINDOW_MS) {
      window.start = now;
      window.sent = 0;
    }
    if (window.timer === null && window.sent < LIMITS.maxLogMessagesPerSecond) {
      window.sent += 1;
      return true;
    }
    window.timer ??= setTimeout(() => this.endWindow(window, service), Math.max(0, window.start + WINDOW_MS - now));
    window.timer.unref();
    return false;
  }

  /** The end of a full second: how many log messages were dropped, and the changes held back. */
  private endWindow(window: Window, service: ServiceRef): void {
    window.timer = null;
    window.start = this.clock();
    window.sent = 0;
    if (window.dropped > 0) {
      this.publish({ kind: 'server.log', service, level: 'warning', logger: null, data: null, truncated: false, dropped: window.dropped, call: null });
      window.dropped = 0;
    }
    const held = [...window.held.values()];
    window.held.clear();
    for (const notice of held) this.publish(notice);
  }

  /** The data as JSON text: redacted before it is serialised, then cut (a secret's piece at the cut redacted too). */
  private dataText(data: unknown): { data: string; truncated: boolean } {
    let text: string;
    try {
      text = JSON.stringify(this.redactor.redactValue(data ?? null));
    } catch {
      text = '"[data that is not JSON]"';
    }
    const { text: cut, truncated } = this.cut(text, LIMITS.maxLogDataChars);
    return { data: cut, truncated };
  }

  private cut(raw: string, max: number): { text: string; truncated: boolean } {
    const text = this.redactor.redactValue(raw);
    if (text.length <= max) return { text, truncated: false };
    return { text: this.redactor.redactEdges(text.slice(0, max), { end: true }), truncated: true };
  }
}
