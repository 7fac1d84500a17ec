import { Type, type Static } from '@sinclair/typebox';
import { ChatMessage, Task } from '../core/wire/index.js';

/**
 * The lines of a session's transcript file (sessions/<id>.jsonl), one schema per type. Every
 * line is checked against the schema of its type before use (unknown extra fields are
 * allowed: records only grow). Persisted: additive changes only. Only the types are imported
 * at run time: the checks are generated at build time (scripts/validators.mjs).
 */
export const RecordSchemas = {
  session: Type.Object({ type: Type.Literal('session'), id: Type.String(), title: Type.String(), createdAt: Type.String() }),
  message: Type.Object({ type: Type.Literal('message'), taskId: Type.String(), at: Type.String(), message: ChatMessage }),
  task: Type.Object({ type: Type.Literal('task'), at: Type.String(), task: Task }),
};
export type RecordSchemas = typeof RecordSchemas;

/** One line of a transcript file. */
export type TranscriptRecord = { [K in keyof RecordSchemas]: Static<RecordSchemas[K]> }[keyof RecordSchemas];
