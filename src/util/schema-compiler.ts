import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { ValidateFunction } from 'ajv';
import type { Check } from './first-use.js';

/**
 * The one place our own schemas are compiled at run time (tools' input schemas from MCP
 * servers have their own compiler, tool-catalog.ts). ajv is loaded with the first schema
 * compiled, not when the daemon starts: loading it costs tens of milliseconds, and the
 * checks that run at every start are generated at build time (scripts/gen-validators.js).
 * Synchronous, through require (ajv is CommonJS), because a check is called synchronously.
 */
export type CompileMode =
  /** Our own schemas: a typo in one is a bug; every error reported. */
  | 'strict'
  /** As strict, but `required` may name properties declared beside an anyOf. */
  | 'strict-anyof'
  /** Records read back from disk: schemas built from the wire shapes, checked loosely. */
  | 'loose';

const OPTIONS: Record<CompileMode, AjvModule.Options> = {
  strict: { allErrors: true, strict: true },
  'strict-anyof': { allErrors: true, strict: true, strictRequired: false },
  loose: { strict: false },
};

const instances = new Map<CompileMode, AjvModule.Ajv>();

function compiler(mode: CompileMode): AjvModule.Ajv {
  let ajv = instances.get(mode);
  if (ajv === undefined) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as typeof AjvModule;
    ajv = new Ajv(OPTIONS[mode]);
    instances.set(mode, ajv);
  }
  return ajv;
}

/** Compiles `schema` now (ajv caches a schema object it has compiled before). */
export function compileSchema<T>(schema: object, mode: CompileMode): ValidateFunction<T> {
  return compiler(mode).compile<T>(schema);
}

/** A check of `schema` compiled when it is first called. */
export function schemaCheck<T>(schema: object, mode: CompileMode): Check<T> {
  let compiled: ValidateFunction<T> | undefined;
  const check = (value: unknown): value is T => (compiled ??= compileSchema<T>(schema, mode))(value);
  return Object.defineProperty(check, 'errors', { get: () => compiled?.errors });
}
