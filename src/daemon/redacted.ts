import { EventHub } from '../control/index.js';
import type { WispEvent } from '../core/index.js';
import type { Redactor } from '../secrets/index.js';

/**
 * Every event passes the redactor as it is serialised, for replay and for subscribers alike
 * (its serialisation is what is searched). Events are serialised lazily (EmittedEvent): all
 * of them are, at once, before the redactor lets a value go, so none is made without it.
 */
export class RedactedEventHub extends EventHub {
  constructor(
    capacity: number,
    now: () => Date,
    private readonly redactor: Redactor,
  ) {
    super(capacity, now);
    redactor.beforeRelease(() => this.hold());
  }

  protected override encode(event: WispEvent): { event: WispEvent; text: string | undefined } {
    try {
      const { value, text } = this.redactor.redactedJson(event);
      return { event: value, text };
    } catch {
      return { event: this.redactor.redactValue(event), text: undefined };
    }
  }
}
