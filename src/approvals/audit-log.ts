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

  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Resolves once this record (and every earlier one) is written; failures go to onError. */
  append(record: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    this.queue = this.queue
      .then(async () => {
        this.handle ??= openSafe(this.file, 'append');
        await (await this.handle).write(line);
      })
      .catch((error: unknown) => {
        this.handle = undefined;
        this.onError(error);
      });
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
