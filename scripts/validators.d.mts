export type Mode = 'strict' | 'loose';
export interface Target {
  readonly file: string;
  readonly mode: Mode;
  readonly schemas: Record<string, object>;
  readonly type?: { readonly name: string; readonly from: string };
}
/** The ajv options, by mode. */
export declare const MODES: Record<Mode, Record<string, boolean>>;
/** ESM standalone code for `schemas` (name -> schema): one function per schema and `checks`, the table of them. */
export declare function standaloneModule(schemas: Record<string, object>, mode: Mode): string;
/** What is generated; `load(path)` imports a module of src/ (a path under src/, ending .js). */
export declare function targets(load: (path: string) => Promise<Record<string, unknown>>): Promise<Target[]>;
/** The generated files (code and types), by path from the repository root. */
export declare function generatedFiles(load: (path: string) => Promise<Record<string, unknown>>): Promise<Record<string, string>>;
