type SchemaErrors = readonly { instancePath: string; message?: string | undefined }[];

/** A compiled schema check, as ajv's ValidateFunction is one. */
export type Check<T> = ((value: unknown) => value is T) & { readonly errors?: SchemaErrors | null | undefined };

/**
 * A check that compiles its schema on first use. Compiling costs milliseconds per schema and a
 * daemon builds several stores at start; most of them (a fresh data dir, no settings, no
 * transcripts, no install records) never check anything, so they should not pay for it.
 */
export function compiledOnFirstUse<T>(compile: () => Check<T>): Check<T> {
  let compiled: Check<T> | undefined;
  const check = (value: unknown): value is T => (compiled ??= compile())(value);
  return Object.defineProperty(check, 'errors', { get: () => compiled?.errors });
}
