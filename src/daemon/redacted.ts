import { EventHub, type MethodEntry } from '../control/index.js';
import { WispError, type EventPayload, type WispEvent } from '../core/index.js';
import type { Redactor } from '../secrets/index.js';

/** Every event passes the redactor before it is numbered, kept for replay and delivered. */
export class RedactedEventHub extends EventHub {
  constructor(
    capacity: number,
    now: () => Date,
    private readonly redactor: Redactor,
  ) {
    super(capacity, now);
  }

  override emit(payload: EventPayload): WispEvent {
    return super.emit(this.redactor.redactValue(payload));
  }
}

/**
 * Every reply, and every error a method throws, passes the redactor: no known secret value
 * leaves on the socket, whichever path a string took. A synchronous handler stays synchronous.
 */
export function redactedHandler(handle: MethodEntry['handle'], redactor: Redactor): MethodEntry['handle'] {
  const redactError = (error: unknown): never => {
    if (error instanceof WispError) throw new WispError(error.code, redactor.redact(error.message), redactor.redactValue(error.details));
    throw error;
  };
  return (params, ctx) => {
    let out: unknown;
    try {
      out = handle(params, ctx);
    } catch (error) {
      return redactError(error);
    }
    if (out instanceof Promise) return out.then((value: unknown) => redactor.redactValue(value), redactError);
    return redactor.redactValue(out);
  };
}
