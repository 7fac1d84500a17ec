import type { ServerResponse } from 'node:http';
import { EventRing } from '../control/event-ring.js';
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
  'service.log',
  'service.offerings',
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
  'network.refused',
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
  /** The newest events as sent, oldest first, for replays: outside the heap, as the daemon keeps its own (see EventRing). */
  private readonly history = new EventRing(HISTORY_EVENTS, HISTORY_BYTES);
  /** Set when the daemon no longer held its first events when the panel subscribed (events.subscribe's missed). */
  startedLate = false;

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
      const dropped = this.history.droppedUpTo;
      if (since < dropped) res.write(`event: missed\ndata: ${JSON.stringify({ since, heldFrom: dropped + 1 })}\n\n`);
      for (const held of this.history.after(since)) res.write(held.text);
    }
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
    return true;
  }

  /**
   * `GET /api/events/held`: the events this panel holds (the daemon's history when the panel
   * started, then what came since), as one JSON document, for the Events page to start with.
   * Apart from the stream, so a page's live state never replays old changes.
   */
  held(): string {
    // Each held text is `id: N\ndata: <one JSON line>\n\n` (send): its data line is the event as JSON already.
    const events = this.history.after(0).map((held) => held.text.slice(held.text.indexOf('\ndata: ') + 7, -2));
    // Complete: from the daemon's first event of this run, none dropped (by the daemon before the panel started, or here since).
    return `{"events":[${events.join(',')}],"complete":${!this.startedLate && this.history.droppedUpTo === 0}}`;
  }

  /** How many pages follow the stream now. */
  get size(): number {
    return this.streams.size;
  }

  send(event: WispEvent): void {
    // JSON.stringify escapes line breaks, so one event is one data line.
    const text = `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
    this.history.push(event.seq, event.type, text, Buffer.byteLength(text));
    this.write(text);
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
