import { promises as fs } from 'node:fs';
import path from 'node:path';
import { jsonProblem, schemaProblem, type StorageProblem } from '../util/index.js';
import { checkDirectory, openSafe, readSafe } from '../util/index.js';
import type { TranscriptRecord } from './transcript-schema.js';
import { checks } from '#generated/transcript-checks.js';

export type { TranscriptRecord } from './transcript-schema.js';

/**
 * Appends records to a session's JSONL transcript. Each completed turn is written with one
 * append and an fsync, so a crash loses at most the turn in flight; a torn last line is
 * ignored when the file is read back.
 */
export class TranscriptFiles {
  constructor(
    readonly dir: string,
    /** Applied to every record before it is written (known secret values redacted). */
    private readonly redact: (record: TranscriptRecord) => TranscriptRecord = (record) => record,
  ) {}

  file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.jsonl`);
  }

  async append(sessionId: string, records: readonly TranscriptRecord[]): Promise<void> {
    if (records.length === 0) return;
    await checkDirectory(this.dir, { create: true });
    const handle = await openSafe(this.file(sessionId), 'append');
    try {
      await handle.writeFile(records.map((r) => `${JSON.stringify(this.redact(r))}\n`).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async remove(sessionId: string): Promise<void> {
    await fs.rm(this.file(sessionId), { force: true });
  }

  /**
   * Every session file's records, in order. A line that is not JSON or fails the record
   * schema is skipped and reported (the file stays as it is); a torn last line (a crash
   * during an append) is skipped silently. An unreadable file is reported and skipped.
   */
  async readAll(problems: StorageProblem[] = []): Promise<{ sessionId: string; records: TranscriptRecord[] }[]> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const out: { sessionId: string; records: TranscriptRecord[] }[] = [];
    for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
      const file = path.join(this.dir, name);
      let text: string;
      try {
        text = await readSafe(file);
      } catch (error) {
        // Not ours (planted, shared, a symlink): never read, and the caller is told.
        if ((error as { code?: unknown }).code === 'UNSAFE_FILE') throw error;
        problems.push({ file, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): the session is not loaded`, movedTo: null });
        continue;
      }
      const records: TranscriptRecord[] = [];
      const lines = text.split('\n');
      for (const [index, line] of lines.entries()) {
        if (line.trim() === '') continue;
        const torn = index === lines.length - 1 && !text.endsWith('\n');
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch (error) {
          if (!torn) problems.push({ file, problem: `line ${index + 1} is ${jsonProblem(error)}: skipped`, movedTo: null });
          continue;
        }
        const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
        // Generated at build time (scripts/validators.mjs), one check per record type.
        const validate = typeof type === 'string' && Object.hasOwn(checks, type) ? checks[type as keyof typeof checks] : undefined;
        if (validate === undefined) {
          problems.push({ file, problem: `line ${index + 1} is not a record of a known type: skipped`, movedTo: null });
          continue;
        }
        if (!validate(parsed)) {
          problems.push({ file, problem: `line ${index + 1} ${schemaProblem(validate.errors)}: skipped`, movedTo: null });
          continue;
        }
        records.push(parsed);
      }
      out.push({ sessionId: name.slice(0, -'.jsonl'.length), records });
    }
    return out;
  }
}
