import type { FileHandle } from 'node:fs/promises';
import { openSafe } from '../util/index.js';

/**
 * An append-only JSONL record of every approval decision and every call: who, what, the
 * argument digest, the outcome and the duration. Never argument values or results. The
 * file stays open (O_APPEND) so a record costs one write, not an open and a close.
 */
export class AuditLog {
  private queue: Promise<void> = Promise.resolve();
  private handle: Promise<FileHandle> | undefined;
  /** The records waiting for the next write, and the promise of that write. */
  private batch: { readonly lines: string[]; readonly written: Promise<void> } | undefined;

  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Resolves once this record (and every earlier one) is written; failures go to onError.
   * Records appended before the previous write finished, or in the same turn, leave in one
   * write: under load a batch of calls costs one trip through the thread pool, not one each.
   */
  append(record: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    if (this.batch !== undefined) {
      this.batch.lines.push(line);
      return this.batch.written;
    }
    const lines = [line];
    this.queue = this.queue
      .then(async () => {
        // From here on, new records go to the next batch.
        this.batch = undefined;
        this.handle ??= openSafe(this.file, 'append');
        await (await this.handle).write(lines.join(''));
      })
      .catch((error: unknown) => {
        this.handle = undefined;
        this.onError(error);
      });
    this.batch = { lines, written: this.queue };
    return this.queue;
  }

  /** Waits for pending records and closes the file. */
  async close(): Promise<void> {
    await this.queue;
    const handle = this.handle;
    this.handle = undefined;
    await (await handle)?.close();
  }
}
