// Types for layers.js (plain JS so that eslint.config.js can import it).
export declare const LAYERS: Record<string, readonly string[]>;
export declare const DOORS: Record<string, readonly string[]>;
export declare const NARROW_DOORS: Record<string, Record<string, readonly string[]>>;
export declare const CLIENT_AREAS: readonly string[];
export declare const CLI_FORBIDDEN_PACKAGES: readonly string[];
export declare function allowedTargets(area: string): string[];
