import type { Logger } from 'pino';
import type { WispPaths } from '../control/index.js';
import type { OutboundRules, StopLadder } from '../mcp/index.js';
import type { Redactor, SecretStore } from '../secrets/index.js';

export interface DaemonOptions {
  readonly paths: WispPaths;
  readonly logger: Logger;
  readonly redactor: Redactor;
  readonly version: string;
  readonly now?: () => Date;
  /** How long stop() waits for in-flight work and for clients to read their last bytes. */
  readonly stopGraceMs?: number;
  /** The stop ladder for MCP servers (stdin closed -> SIGTERM -> SIGKILL). */
  readonly ladder?: StopLadder;
  /** PATH used to resolve bare command names (default: the daemon's own PATH). */
  readonly searchPath?: string;
  /** The keychain backend (default: the OS keychain). */
  readonly keychain?: SecretStore;
  /** The daemon's own environment, for DEEPSEEK_API_KEY (default: process.env). It never reaches a server. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where installs look for Node and npm unless settings.json says otherwise (default: the fixed system list). */
  readonly runtimeDirs?: readonly string[];
  /**
   * A test seam for the rule that a remote service's OAuth requests go no nearer than its
   * own URL (mcp/outbound.ts): endpoints counted as public. wispd never sets it (no flag, no
   * variable, no setting): only a test that builds a Daemon in its own process can.
   */
  readonly outbound?: OutboundRules;
}

export const DEFAULT_LADDER: StopLadder = { stdinGraceMs: 2000, termGraceMs: 2000 };
