import { promises as fs } from 'node:fs';
import type { WispEvent } from '../core/index.js';

/**
 * A persisted file (or one record in it) that was bad when read. The daemon skips the record
 * or moves the file aside (intact) and goes on; the daemon reports each problem in its log
 * and as a `storage.warning` event.
 */
/** What was wrong with a persisted file (never its content), as the storage.warning event reports it. */
export type StorageProblem = Readonly<Omit<Extract<WispEvent, { type: 'storage.warning' }>, 'type' | 'seq' | 'at'>>;

/** Why JSON.parse failed, without quoting the text (Node quotes a piece of the input). */
export function jsonProblem(error: unknown): string {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  return position !== undefined ? `not valid JSON (at position ${position})` : 'not valid JSON';
}

/** Ajv errors as `path message` pairs (paths and schema words only, never the values). */
export function schemaProblem(errors: readonly { instancePath: string; message?: string | undefined }[] | null | undefined): string {
  const list = (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  return `fails its schema: ${list.join('; ')}`;
}

/** Renames a bad file to `<file>.bad-<time>` (kept intact for the user) and returns the new path. */
export async function moveAside(file: string, now: Date): Promise<string> {
  const movedTo = `${file}.bad-${now.toISOString().replace(/[:.]/g, '-')}`;
  await fs.rename(file, movedTo);
  return movedTo;
}
