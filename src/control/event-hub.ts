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
 * Told each event as it is emitted; its JSON is made when first asked for (see EmittedEvent).
 */
export type EventListener = (event: WispEvent, emitted: EmittedEvent) => void;

/** The notification an event goes out in: {"jsonrpc":"2.0","method":"event","params":...} and a newline. */
const FRAME_HEAD = '{"jsonrpc":"2.0","method":"event","params":';

/**
 * One emitted event, serialised when first needed and then never again: by a subscriber's
 * write, at the end of the turn, or by the history (EventHub.hold), whichever comes first.
 *
 * Why not at emit: an event is emitted on the way to what a call waits for (a tool call's
 * "started" just before it is sent to its server, its "finished" just before its answer),
 * and serialised there, every call waited for it. Measured in sequential calls (hook on
 * the daemon's reads and writes): the call reached its server about 9 us sooner and its
 * answer its caller about 5 us sooner, 5 to 7% of a call's p50. Made later, it is the same
 * work, done while the server or the client is busy with what was sent.
 */
export class EmittedEvent {
  private serialized: { readonly text: string; readonly bytes: number } | null | undefined;
  private line: string | null | undefined;

  constructor(
    readonly event: WispEvent,
    private readonly serialize: (event: WispEvent) => { text: string; bytes: number } | null,
  ) {}

  /** The event's JSON and its size in bytes; null when it cannot be sent (not serialisable, or larger than an event may be). */
  get json(): { readonly text: string; readonly bytes: number } | null {
    if (this.serialized === undefined) this.serialized = this.serialize(this.event);
    return this.serialized;
  }

  /** The size of `frame` in bytes (newline included); Infinity when there is none. */
  get frameBytes(): number {
    const json = this.json;
    return json === null ? Infinity : json.bytes + FRAME_HEAD.length + 2;
  }

  /** The whole notification, newline included; null as for `json`. */
  get frame(): string | null {
    if (this.line === undefined) {
      const json = this.json;
      this.line = json === null ? null : `${FRAME_HEAD}${json.text}}\n`;
    }
    return this.line;
  }
}

export interface EventHubLimits {
  /** Total serialised size of the events held for `since`. */
  readonly maxBytes: number;
  /** One event, serialised; a larger one is delivered to in-process listeners only, never held. */
  readonly maxEventBytes: number;
}

/** What the notification around an event adds (FRAME_HEAD, the closing brace and the newline), with room to spare. */
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
  private readonly pending: EmittedEvent[] = [];
  private delivering = false;
  /** Emitted, not yet in the history: held at the end of the turn after their own (see hold). */
  private unheld: EmittedEvent[] = [];
  private holdScheduled = false;
  private refused: ((event: WispEvent) => void) | undefined;

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
    this.hold();
    return { count: this.history.length, bytes: this.history.bytes };
  }

  /** Told of each event that cannot be sent (it could not be serialised, or is too large), once. */
  onRefused(listener: (event: WispEvent) => void): void {
    this.refused = listener;
  }

  /**
   * Takes `payload` over (it is stamped with seq and at, not copied): pass a fresh object,
   * and change nothing in it afterwards (it is serialised later: see EmittedEvent).
   */
  emit(payload: EventPayload): WispEvent {
    this.seq += 1;
    // The payload is the caller's fresh object: stamped in place (a copy by spread cost more than the rest of emit).
    const event: WispEvent = Object.assign(payload, { seq: this.seq, at: isoTime(this.now()) });
    const emitted = new EmittedEvent(event, this.serialize);
    this.unheld.push(emitted);
    if (!this.holdScheduled) {
      this.holdScheduled = true;
      setImmediate(this.holdAfterWrites);
    }
    this.pending.push(emitted);
    if (!this.delivering) {
      this.delivering = true;
      try {
        for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
          for (const listener of this.listeners) listener(next.event, next);
        }
      } finally {
        this.delivering = false;
      }
    }
    return event;
  }

  /**
   * Puts every emitted event in the history, in seq order, serialising those no subscriber
   * has asked for yet. Runs by itself soon after they are emitted; run it at once before
   * anything a later serialisation would see differently (a secret value let go).
   */
  hold(): void {
    const unheld = this.unheld;
    if (unheld.length === 0) return;
    this.unheld = [];
    for (const emitted of unheld) {
      const json = emitted.json;
      if (json !== null) this.history.push(emitted.event.seq, emitted.event.type, json.text, json.bytes);
    }
  }

  /** The event as it is serialised, and its JSON (undefined when it cannot be serialised). Never throws. */
  protected encode(event: WispEvent): { event: WispEvent; text: string | undefined } {
    try {
      const text: string | undefined = JSON.stringify(event);
      return { event, text };
    } catch {
      return { event, text: undefined };
    }
  }

  /**
   * Immediates run in the order they were set: the writes a turn queues after its events
   * (a call's answer comes after its "finished") would wait for this one. From here the
   * history is held in the next turn, after every write queued in this one.
   */
  private readonly holdAfterWrites = (): void => {
    setImmediate(this.holdNow);
  };

  private readonly holdNow = (): void => {
    this.holdScheduled = false;
    this.hold();
  };

  private readonly serialize = (event: WispEvent): { text: string; bytes: number } | null => {
    const json = sized(this.encode(event).text, this.limits.maxEventBytes);
    if (json === null) this.refused?.(event);
    return json;
  };

  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Held events with seq > since. `since` must not be ahead of lastSeq (the caller checks). */
  replay(since: number | undefined, runId: string | undefined): Replay {
    if (since === undefined) return { events: [], missed: false };
    this.hold();
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
