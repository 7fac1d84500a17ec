// Types for layers.js (plain JS so that eslint.config.js can import it).
export declare const LAYERS: Record<string, readonly string[]>;
export declare const DOORS: Record<string, readonly string[]>;
export declare const GENERATED: Record<string, readonly string[]>;
export declare const NARROW_DOORS: Record<string, Record<string, readonly string[]>>;
export declare const CLIENT_AREAS: readonly string[];
export declare const CLI_FORBIDDEN_PACKAGES: readonly string[];
export declare function allowedTargets(area: string): string[];
export declare const BROWSER_APP: {
  /** The app's directory, relative to src/. */
  readonly dir: string;
  /** What of src/ it may import besides its own files, relative to src/ ('core/index.js'). */
  readonly imports: readonly string[];
  /** The packages it may import (html.js only). */
  readonly packages: readonly string[];
  /** Preact + hooks + htm (htm's standalone build), a file of its own beside the bundle (html.js only). */
  readonly vendor: string;
};
