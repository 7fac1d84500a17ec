type SchemaErrors = readonly { instancePath: string; message?: string | undefined }[];

/** A compiled schema check, as ajv's ValidateFunction is one. */
export type Check<T> = ((value: unknown) => value is T) & { readonly errors?: SchemaErrors | null | undefined };
