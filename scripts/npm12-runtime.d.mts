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
/** The Node.js releases besides the machine's own that the unit and gateway tests also run on. */
export declare const OTHER_NODE_VERSIONS: readonly string[];
/** A bin directory holding `node` of that version, installed from the npm registry on first use. */
export declare function nodeBin(version: string): Promise<string>;
/** Installs exact-version `specs` from the npm registry into .cache/NAME once; returns that directory. */
export declare function cachedInstall(name: string, specs: readonly string[], finish?: (dir: string) => Promise<void>): Promise<string>;
export declare const REAL_SERVERS_VERSION: string;
/** server-filesystem, server-memory and server-everything, installed on first use: each one's entry script, and the node_modules/.bin directory. */
export declare function realServers(): Promise<{ filesystem: string; memory: string; everything: string; bin: string }>;
