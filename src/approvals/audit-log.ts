import { promises as fs } from 'node:fs';

/**
 * An append-only JSONL record of every approval decision and every call: who, what, the
 * argument digest, the outcome and the duration. Never argument values or results.
 */
export class AuditLog {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Resolves once this record (and every earlier one) is written; failures go to onError. */
  append(record: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    this.queue = this.queue.then(() => fs.appendFile(this.file, line, { mode: 0o600 })).catch(this.onError);
    return this.queue;
  }

  /** Resolves when everything appended so far is written. */
  flush(): Promise<void> {
    return this.queue;
  }
}
