export declare const NODE_VERSION: string;
export declare const NPM_VERSION: string;
/** The bin directory with node (22) and npm (12), installed on first use. */
export declare function npm12Bin(): Promise<string>;
export declare const CONFORMANCE_VERSION: string;
/** The MCP conformance suite's CLI (run it with the node from npm12Bin()), installed on first use. */
export declare function conformanceCli(): Promise<string>;
export declare const INSPECTOR_VERSION: string;
/** The MCP Inspector's launcher (run it with the node from npm12Bin(), with --cli), installed on first use. */
export declare function inspectorLauncher(): Promise<string>;
