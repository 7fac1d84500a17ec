import { randomUUID } from 'node:crypto';
import type { EventPayload, WispEvent } from './protocol.js';

export interface Replay {
  readonly events: readonly WispEvent[];
  /** Some events after `since` are no longer held (or `since` belongs to another run). */
  readonly missed: boolean;
}

/**
 * Stamps events with a monotonic `seq` (per daemon run) and the time, keeps the most recent
 * ones for clients that reconnect with `since`, and hands each to the listeners.
 */
export class EventHub {
  readonly runId = randomUUID();
  private seq = 0;
  private readonly history: WispEvent[] = [];
  private readonly listeners = new Set<(event: WispEvent) => void>();
  /** Events emitted by a listener wait here, so every listener sees every event in seq order. */
  private readonly pending: WispEvent[] = [];
  private delivering = false;

  constructor(
    private readonly capacity: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get lastSeq(): number {
    return this.seq;
  }

  emit(payload: EventPayload): WispEvent {
    this.seq += 1;
    const event = { ...payload, seq: this.seq, at: this.now().toISOString() };
    this.history.push(event);
    if (this.history.length > this.capacity) this.history.shift();
    this.pending.push(event);
    if (!this.delivering) {
      this.delivering = true;
      try {
        for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
          for (const listener of this.listeners) listener(next);
        }
      } finally {
        this.delivering = false;
      }
    }
    return event;
  }

  onEvent(listener: (event: WispEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Held events with seq > since. `since` must not be ahead of lastSeq (the caller checks). */
  replay(since: number | undefined, runId: string | undefined): Replay {
    if (since === undefined) return { events: [], missed: false };
    const otherRun = runId !== undefined && runId !== this.runId;
    const from = otherRun ? 0 : since;
    const events = this.history.filter((event) => event.seq > from);
    const oldestHeld = this.history[0]?.seq ?? this.seq + 1;
    const missed = otherRun || oldestHeld > from + 1;
    return { events, missed: missed && from < this.seq };
  }
}
