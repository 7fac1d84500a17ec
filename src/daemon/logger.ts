import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Redactor } from '../secrets/index.js';

export interface LoggerOptions {
  readonly level: string;
  readonly pretty: boolean;
  readonly redactor: Redactor;
  /** Defaults to stdout. */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * JSON logs (pretty for a human at a terminal). Every line passes through the redactor,
 * which the secrets area feeds with known values, so a secret that reaches a log call by
 * mistake is still not written.
 */
export function createLogger(options: LoggerOptions): Logger {
  const hooks = { streamWrite: (line: string) => options.redactor.redact(line) };
  const base = { base: { pid: process.pid }, level: options.level, hooks };
  if (options.pretty) {
    // Loaded only for a human at a terminal: the service (launchd, systemd) logs JSON and never pays for it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pino(base, pretty({ colorize: true, destination: options.destination ?? 1, sync: true }));
  }
  return pino(base, options.destination ?? pino.destination({ dest: 1, sync: true }));
}
