import type { ServerResponse } from 'node:http';
import type { WispEvent } from '../core/index.js';
import { SECURITY_HEADERS } from './guard.js';

/** The event types the pages use (Services, Approvals, Installs, Chat, Events). */
export const PANEL_EVENT_TYPES = [
  'service.registered',
  'service.updated',
  'service.deleted',
  'service.state',
  'service.tools',
  'service.login',
  'tools.held',
  'tools.accepted',
  'approval.requested',
  'approval.resolved',
  'elicitation.requested',
  'elicitation.resolved',
  'tool.call.started',
  'tool.call.finished',
  'tool.call.failed',
  'session.created',
  'session.deleted',
  'task.state',
  'model.delta',
  'install.progress',
  'install.finished',
  'storage.warning',
  'daemon.recovered',
  'daemon.stopping',
] as const;

/** At most this many pages follow the stream at once. */
const MAX_STREAMS = 32;
/** A page that stops reading is dropped once this much is waiting for it. */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;
/** Events held for a page that reconnects (Last-Event-ID): at most this many, and this many bytes. */
const HISTORY_EVENTS = 1000;
const HISTORY_BYTES = 2 * 1024 * 1024;
/** A comment this often keeps idle connections from being closed by anything in between. */
const HEARTBEAT_MS = 15_000;

/**
 * `GET /api/events`: the daemon's events as Server-Sent Events, one stream per open page.
 * The panel holds one subscription to the daemon and fans it out here.
 */
export class EventStreams {
  private readonly streams = new Set<ServerResponse>();
  private readonly heartbeat: NodeJS.Timeout;
  /** The newest events as sent, oldest first, for replays. */
  private readonly history: { seq: number; text: string }[] = [];
  private historyBytes = 0;
  /** The seq of the newest event dropped from the history (0: none dropped yet). */
  private droppedUpTo = 0;

  constructor() {
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Opens a stream on res; false when too many are open (the caller answers). With since (a
   * page that lost its stream: the browser's Last-Event-ID), the held events after it come
   * first, and a `missed` event when some of them are no longer held.
   */
  open(res: ServerResponse, since: number | null = null): boolean {
    if (this.streams.size >= MAX_STREAMS) return false;
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // The first bytes tell the page the stream is open, so it loads lists after this point.
    res.write('retry: 3000\n: open\n\n');
    if (since !== null) {
      if (since < this.droppedUpTo) res.write(`event: missed\ndata: ${JSON.stringify({ since, heldFrom: this.droppedUpTo + 1 })}\n\n`);
      for (const held of this.history) if (held.seq > since) res.write(held.text);
    }
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
    return true;
  }

  /** How many pages follow the stream now. */
  get size(): number {
    return this.streams.size;
  }

  send(event: WispEvent): void {
    // JSON.stringify escapes line breaks, so one event is one data line.
    const text = `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
    this.hold(event.seq, text);
    this.write(text);
  }

  private hold(seq: number, text: string): void {
    this.history.push({ seq, text });
    this.historyBytes += text.length;
    while (this.history.length > HISTORY_EVENTS || this.historyBytes > HISTORY_BYTES) {
      const dropped = this.history.shift();
      if (dropped === undefined) break;
      this.historyBytes -= dropped.text.length;
      this.droppedUpTo = dropped.seq;
    }
  }

  /** Ends every stream (the panel is stopping). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  private write(text: string): void {
    for (const res of this.streams) {
      if (res.writableLength > MAX_UNREAD_BYTES) {
        res.destroy();
        this.streams.delete(res);
      } else res.write(text);
    }
  }
}
