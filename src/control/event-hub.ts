import { randomUUID } from 'node:crypto';
import { LIMITS } from '../core/index.js';
import { isoTime } from '../util/index.js';
import type { EventPayload, WispEvent } from '../core/index.js';
import { EventRing, type HeldEvent } from './event-ring.js';

export type { HeldEvent };

export interface Replay {
  readonly events: readonly HeldEvent[];
  /** Some events after `since` are no longer held (or `since` belongs to another run). */
  readonly missed: boolean;
}

/**
 * Told each event with its serialisation (done once per event, here), or null when it cannot
 * be sent: it could not be serialised, or it is larger than a frame may carry.
 */
export type EventListener = (event: WispEvent, serialized: string | null) => void;

export interface EventHubLimits {
  /** Total serialised size of the events held for `since`. */
  readonly maxBytes: number;
  /** One event, serialised; a larger one is delivered to in-process listeners only, never held. */
  readonly maxEventBytes: number;
}

/** What the notification around an event adds: {"jsonrpc":"2.0","method":"event","params":...} and a newline. */
const ENVELOPE_BYTES = 64;

/**
 * Stamps events with a monotonic `seq` (per daemon run) and the time, keeps the most recent
 * ones for clients that reconnect with `since` (bounded in count and in bytes), and hands
 * each to the listeners.
 */
export class EventHub {
  readonly runId = randomUUID();
  private seq = 0;
  private readonly history: EventRing;
  private readonly listeners = new Set<EventListener>();
  /** Events emitted by a listener wait here, so every listener sees every event in seq order. */
  private readonly pending: { event: WispEvent; serialized: string | null }[] = [];
  private delivering = false;

  constructor(
    capacity: number,
    private readonly now: () => Date = () => new Date(),
    private readonly limits: EventHubLimits = {
      maxBytes: LIMITS.maxEventHistoryBytes,
      maxEventBytes: LIMITS.maxControlFrameBytes - ENVELOPE_BYTES,
    },
  ) {
    this.history = new EventRing(capacity, limits.maxBytes);
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Events held for `since`, and their serialised size. */
  get held(): { count: number; bytes: number } {
    return { count: this.history.length, bytes: this.history.bytes };
  }

  /** Takes `payload` over (it is stamped with seq and at, not copied): pass a fresh object. */
  emit(payload: EventPayload): WispEvent {
    this.seq += 1;
    // The payload is the caller's fresh object: stamped in place (a copy by spread cost more than the rest of emit).
    const encoded = this.encode(Object.assign(payload, { seq: this.seq, at: isoTime(this.now()) }));
    const event = encoded.event;
    const serialized = sized(encoded.text, this.limits.maxEventBytes);
    if (serialized !== null) this.history.push(event.seq, event.type, serialized.text, serialized.bytes);
    this.pending.push({ event, serialized: serialized?.text ?? null });
    if (!this.delivering) {
      this.delivering = true;
      try {
        for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
          for (const listener of this.listeners) listener(next.event, next.serialized);
        }
      } finally {
        this.delivering = false;
      }
    }
    return event;
  }

  /** The event as it is delivered, and its JSON (undefined when it cannot be serialised). Never throws. */
  protected encode(event: WispEvent): { event: WispEvent; text: string | undefined } {
    try {
      const text: string | undefined = JSON.stringify(event);
      return { event, text };
    } catch {
      return { event, text: undefined };
    }
  }

  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Held events with seq > since. `since` must not be ahead of lastSeq (the caller checks). */
  replay(since: number | undefined, runId: string | undefined): Replay {
    if (since === undefined) return { events: [], missed: false };
    const otherRun = runId !== undefined && runId !== this.runId;
    const from = otherRun ? 0 : since;
    const events = this.history.after(from);
    const oldestHeld = this.history.oldestSeq ?? this.seq + 1;
    const missed = otherRun || oldestHeld > from + 1;
    return { events, missed: missed && from < this.seq };
  }
}

/** The event's JSON and its size in bytes, or null if it could not be serialised or is over `maxBytes`. */
function sized(text: string | undefined, maxBytes: number): { text: string; bytes: number } | null {
  if (typeof text !== 'string') return null;
  const bytes = Buffer.byteLength(text);
  return bytes <= maxBytes ? { text, bytes } : null;
}
