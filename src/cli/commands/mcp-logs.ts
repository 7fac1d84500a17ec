import type { WispClient } from '../../control/client.js';
import type { Result, Service } from '../../core/index.js';
import type { CliContext } from '../context.js';
import { EXIT_INTERRUPTED } from '../prompt.js';
import { clean, cleanBlock } from '../render.js';

/**
 * `mcp logs NAME -f`: the stderr tail, followed. The daemon sends no event per stderr write
 * (the tail is held in memory, redacted on each read), so the tail is read again every
 * POLL_MS, and at once when the service changes state (its last words before it stops).
 */

const POLL_MS = 500;

/** What is new in a tail read, by position: every character the service wrote is `droppedChars` + its index. */
export class TailFollower {
  /** Where the printed text ends, counted from the first character this tail ever held. */
  private consumed = 0;
  /** A last line without its newline, as it was at the previous read. */
  private partial: string | null = null;

  /** The service started again: its new tail begins at 0. */
  reset(): void {
    this.consumed = 0;
    this.partial = null;
  }

  /**
   * The complete lines not printed yet (a last line without newline only once it stayed the
   * same for two reads), and whether older output went by unread.
   */
  next(logs: Result<'services.logs'>): { text: string; missed: number } {
    const total = logs.droppedChars + logs.stderr.length;
    if (total < this.consumed) this.reset();
    const from = this.consumed - logs.droppedChars;
    const missed = Math.max(0, -from);
    const start = Math.max(0, from);
    let end = logs.stderr.lastIndexOf('\n', logs.stderr.length - 1) + 1;
    const tail = logs.stderr.slice(Math.max(start, end));
    if (tail !== '' && tail === this.partial) end = logs.stderr.length;
    this.partial = end < logs.stderr.length ? tail : null;
    if (end <= start) return { text: '', missed };
    this.consumed = logs.droppedChars + end;
    return { text: logs.stderr.slice(start, end), missed };
  }
}

/** Follows until Ctrl-C (exit 130) or the daemon closes the connection (exit 0); a removed service ends it with SERVICE_NOT_FOUND. */
export async function followLogs(client: WispClient, ctx: CliContext, service: Service): Promise<void> {
  const follower = new TailFollower();
  let wake: () => void = () => undefined;
  // An object, not two lets: they change in callbacks, where the compiler does not look.
  const end = { stopped: false, interrupted: false };
  const running = (): boolean => !end.stopped;
  const stop = (): void => {
    end.stopped = true;
    wake();
  };
  // Starts seen, and the start the follower is at. A read answered in the same chunk as the
  // start's event is handled after the event (its answer resolves a promise; the event runs at
  // once), so the reset waits for a read asked after the start: an older one may hold the old tail.
  const starts = { seen: 0, followed: 0 };
  client.onEvent((event) => {
    if (event.type !== 'service.state' || event.service.id !== service.id) return;
    if (event.connection.status === 'activating' && event.connection.phase === 'spawning') starts.seen += 1;
    wake();
  });
  client.onClose(stop);
  const onSigint = (): void => {
    end.interrupted = true;
    stop();
  };
  process.once('SIGINT', onSigint);
  try {
    await client.call('events.subscribe', { types: ['service.state'] });
    while (running()) {
      const asked = starts.seen;
      const logs = await client.call('services.logs', { id: service.id });
      if (asked !== starts.seen) continue; // the service started again meanwhile: read its new tail
      if (starts.followed !== asked) {
        follower.reset();
        starts.followed = asked;
      }
      const { text, missed } = follower.next(logs);
      if (missed > 0) ctx.io.out(`[${missed} characters went by unread]`);
      if (text !== '') ctx.io.out(cleanBlock(text.replace(/\r?\n$/, '')));
      if (!running()) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } catch (error) {
    // The daemon went away mid-read: a normal end, as for events --follow.
    if (running()) throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
  if (end.interrupted) process.exitCode = EXIT_INTERRUPTED;
  else ctx.io.err(`${clean(service.name)}: the daemon closed the connection`);
}
