import { EventHub } from '../control/index.js';
import type { WispEvent } from '../core/index.js';
import type { Redactor } from '../secrets/index.js';

/** Every event passes the redactor before it is kept for replay and delivered (its serialisation is what is searched). */
export class RedactedEventHub extends EventHub {
  constructor(
    capacity: number,
    now: () => Date,
    private readonly redactor: Redactor,
  ) {
    super(capacity, now);
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
