import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Task } from '../control/index.js';
import type { ChatMessage } from '../model/index.js';
import { checkDirectory, openSafe, readSafe } from '../control/index.js';

/** One line of a session's transcript file (sessions/<id>.jsonl). Persisted: additive changes only. */
export type TranscriptRecord =
  | { readonly type: 'session'; readonly id: string; readonly title: string; readonly createdAt: string }
  | { readonly type: 'message'; readonly taskId: string; readonly at: string; readonly message: ChatMessage }
  | { readonly type: 'task'; readonly at: string; readonly task: Task };

/**
 * Appends records to a session's JSONL transcript. Each completed turn is written with one
 * append and an fsync, so a crash loses at most the turn in flight; a torn last line is
 * ignored when the file is read back.
 */
export class TranscriptFiles {
  constructor(readonly dir: string) {}

  file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.jsonl`);
  }

  async append(sessionId: string, records: readonly TranscriptRecord[]): Promise<void> {
    if (records.length === 0) return;
    await checkDirectory(this.dir, { create: true });
    const handle = await openSafe(this.file(sessionId), 'append');
    try {
      await handle.writeFile(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async remove(sessionId: string): Promise<void> {
    await fs.rm(this.file(sessionId), { force: true });
  }

  /** Every session file's records, in order. Unreadable lines (a torn last write) are skipped. */
  async readAll(): Promise<{ sessionId: string; records: TranscriptRecord[] }[]> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const out: { sessionId: string; records: TranscriptRecord[] }[] = [];
    for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
      const text = await readSafe(path.join(this.dir, name));
      const records: TranscriptRecord[] = [];
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        try {
          records.push(JSON.parse(line) as TranscriptRecord);
        } catch {
          // a torn write at the end of the file
        }
      }
      out.push({ sessionId: name.slice(0, -'.jsonl'.length), records });
    }
    return out;
  }
}
