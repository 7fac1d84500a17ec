export declare const NODE_VERSION: string;
export declare const NPM_VERSION: string;
/** The bin directory with node (22) and npm (12), installed on first use. */
export declare function npm12Bin(): Promise<string>;
