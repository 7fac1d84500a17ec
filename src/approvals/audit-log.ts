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
  /** A write failed: part of its line may be in the file, so the next write starts on a new line. */
  private broken = false;
  /** The records waiting for the next write, and the promise of that write (true once written). */
  private batch: { readonly lines: string[]; readonly written: Promise<boolean> } | undefined;

  /** `onError`: told when a write fails after one that did not (once per failing stretch). `serialize`: a record's JSON (the daemon's redacts known secret values as it serialises). */
  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
    private readonly serialize: (record: Record<string, unknown>) => string = (record) => JSON.stringify(record),
  ) {}

  /**
   * Resolves once this record (and every earlier one) was written (true) or could not be
   * (false: the failure went to onError); never rejects.
   * The records appended in one synchronous run leave together, in one synchronous write on
   * the open descriptor, in the microtask after it: an append to a local file is a copy into
   * the page cache (about 3 us), cheaper than a trip through libuv's thread pool, and a call
   * is answered in the same event-loop turn its result arrived in (waiting for the end of
   * the turn to batch more records cost every call a turn).
   */
  append(record: Record<string, unknown>): Promise<boolean> {
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
        writeAll((await this.handle).fd, Buffer.from(this.broken ? `\n${lines.join('')}` : lines.join('')));
        this.broken = false;
        return true;
      })
      .catch((error: unknown) => {
        // A part of the batch may be in the file (a short write before ENOSPC): the next write starts on a new line.
        const handle = this.handle;
        this.handle = undefined;
        void handle?.then((h) => h.close()).catch(() => undefined);
        // Told once per failing stretch (a full disk fails every append until space returns).
        if (!this.broken) this.onError(error);
        this.broken = true;
        return false;
      });
    this.queue = written.then(() => undefined);
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
