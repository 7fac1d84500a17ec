/**
 * What an error code means where it is raised and read: the checks and the one error class.
 * The codes themselves are in error-catalog.ts (its header says what a code promises).
 */
import { ERROR_CATALOG, EXIT, type CatalogEntry } from './error-catalog.js';

export * from './error-catalog.js';

export type ErrorCode = keyof typeof ERROR_CATALOG;
export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

/** The codes that never cross the socket (see the header). */
export type LocalErrorCode = { [C in ErrorCode]: (typeof ERROR_CATALOG)[C] extends { readonly wire: false } ? C : never }[ErrorCode];
/** The codes that may cross the socket: every method's declared errors are among them. */
export type WireErrorCode = Exclude<ErrorCode, LocalErrorCode>;

export function isWireErrorCode(value: unknown): value is WireErrorCode {
  if (!isErrorCode(value)) return false;
  const entry: CatalogEntry = ERROR_CATALOG[value];
  return entry.wire !== false;
}

export function exitStatusFor(code: string): number {
  return isErrorCode(code) ? ERROR_CATALOG[code].exit : EXIT.failure;
}

/** An error with a stable code. Thrown inside the daemon, re-created by the client. */
export class WispError extends Error {
  override readonly name = 'WispError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get rpcCode(): number {
    return ERROR_CATALOG[this.code].rpcCode;
  }
}
