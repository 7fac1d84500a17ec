/** ESM standalone code for `schemas` (name -> schema): one function per schema and `checks`, the table of them. */
export declare function standaloneModule(schemas: Record<string, object>): string;
/** The generated files (code and types), by path from the repository root. */
export declare function generatedFiles(schemas: { methods: Record<string, { params: object }>; registryDocument: object }): Record<string, string>;
/** The ajv options the generated checks are compiled with. */
export declare const STRICT: { allErrors: true; strict: true };
