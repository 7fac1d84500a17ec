import { LIMITS } from '../core/index.js';
import { Failure } from './failure.js';

/**
 * One tool call's time limit (the service's timeoutMs). It starts again at each progress
 * report, and it stops while a request of the call's server waits for the human (an
 * elicitation the call owns: the server is waiting on the user then, not the user on the
 * server), starting again in full once that is answered. A user filling in a form must not
 * see the call time out, and its connection close, under their fingers.
 *
 * An overall cap (maxCallMs, or timeoutMs if longer) holds whatever happens, held or not:
 * past it the call ends TIMEOUT, and a request still waiting for the human ends cancelled
 * with it. Both limits share one timer: it is set for whichever comes first.
 */
/** What a server said of a call's progress (notifications/progress): checked numbers, its message as sent. */
export interface ProgressReport {
  readonly progress: number;
  readonly total: number | null;
  readonly message: string | null;
}

/** The report in `params` of a notifications/progress, when its progress is a finite number. */
export function progressReport(params: Readonly<Record<string, unknown>> | undefined): ProgressReport | undefined {
  const { progress, total, message } = params ?? {};
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined;
  return { progress, total: typeof total === 'number' && Number.isFinite(total) ? total : null, message: typeof message === 'string' ? message.slice(0, 500) : null };
}

export class CallClock {
  /**
   * Made when someone asks for `signal` only: the socket's call path listens through
   * `onExpire` instead (an AbortController and its listener cost a few microseconds and
   * some garbage per call, and most calls never expire).
   */
  private controller: AbortController | undefined;
  private reason: Failure | undefined;
  private listener: ((reason: Failure) => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timeoutMs = 0;
  /** When the overall cap passes (Date.now() time), from start. */
  private capAt = 0;
  private holds = 0;
  private running = false;

  /** Aborts, with a TIMEOUT Failure as its reason, when the limit passes. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.reason !== undefined;
  }

  /** The TIMEOUT Failure it expired with; undefined while it has not. */
  get expiry(): Failure | undefined {
    return this.reason;
  }

  /** Tells `listener` (one at a time, until `offExpire`) when the limit passes. */
  onExpire(listener: (reason: Failure) => void): void {
    this.listener = listener;
  }

  offExpire(): void {
    this.listener = undefined;
  }

  /** The call is being sent: the limit runs (unless held). */
  start(timeoutMs: number): void {
    this.timeoutMs = timeoutMs;
    this.capAt = Date.now() + this.capMs;
    this.running = true;
    this.arm();
  }

  /** Told of each progress report the call's server sends (ToolCalls relays them to the caller). */
  onReport: ((report: ProgressReport) => void) | undefined;

  /** A progress report: the limit starts again, and whoever listens hears it. */
  touch(report?: ProgressReport): void {
    this.arm();
    if (report !== undefined) this.onReport?.(report);
  }

  /** A request of the call's server waits for the human: the limit stops until the returned release (idempotent). */
  hold(): () => void {
    this.holds += 1;
    this.arm();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      this.arm();
    };
  }

  /** The call ended. */
  stop(): void {
    this.running = false;
    this.arm();
  }

  get capMs(): number {
    return Math.max(this.timeoutMs, LIMITS.maxCallMs);
  }

  private arm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.running || this.expired) return;
    const toCap = Math.max(0, this.capAt - Date.now());
    // Held, only the cap runs; else whichever limit passes first.
    const cap = this.holds > 0 || toCap <= this.timeoutMs;
    const limitMs = cap ? this.capMs : this.timeoutMs;
    this.timer = setTimeout(() => this.expire(new Failure('TIMEOUT', `the server did not answer within ${limitMs} ms`)), cap ? toCap : limitMs);
  }

  private expire(reason: Failure): void {
    this.reason = reason;
    this.timer = undefined;
    this.controller?.abort(reason);
    this.listener?.(reason);
  }
}
