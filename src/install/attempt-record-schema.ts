import { Type, type Static } from '@sinclair/typebox';
import { InstallAttempt } from '../core/wire/index.js';

/**
 * `<digest>.json` beside the plan directory: the attempt as the protocol shows it (one
 * object per status), plus a schema version. Persisted: additive changes only.
 */
export const AttemptRecord = Type.Intersect([Type.Object({ schemaVersion: Type.Literal(1) }), InstallAttempt]);
export type AttemptRecord = Static<typeof AttemptRecord>;
