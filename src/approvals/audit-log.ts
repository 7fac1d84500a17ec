import { writeSync } from 'node:fs';
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

  /** `serialize`: a record's JSON (the daemon's redacts known secret values as it serialises). */
  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
    private readonly serialize: (record: Record<string, unknown>) => string = (record) => JSON.stringify(record),
  ) {}

  /**
   * Resolves once this record (and every earlier one) is written; failures go to onError.
   * The records appended in one synchronous run leave together, in one synchronous write on
   * the open descriptor, in the microtask after it: an append to a local file is a copy into
   * the page cache (about 3 us), cheaper than a trip through libuv's thread pool, and a call
   * is answered in the same event-loop turn its result arrived in (waiting for the end of
   * the turn to batch more records cost every call a turn).
   */
  append(record: Record<string, unknown>): Promise<void> {
    const line = `${this.serialize(record)}\n`;
    if (this.batch !== undefined) {
      this.batch.lines.push(line);
      return this.batch.written;
    }
    const lines = [line];
    const written = this.queue
      .then(async () => {
        // From here on, new records go to the next batch.
        this.batch = undefined;
        this.handle ??= openSafe(this.file, 'append');
        writeAll((await this.handle).fd, Buffer.from(lines.join('')));
      })
      .catch((error: unknown) => {
        this.handle = undefined;
        this.onError(error);
      });
    this.queue = written;
    this.batch = { lines, written };
    return written;
  }

  /** Waits for pending records and closes the file. */
  async close(): Promise<void> {
    await this.queue;
    const handle = this.handle;
    this.handle = undefined;
    await (await handle)?.close();
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}
