import type { CatalogTool } from './tool-catalog.js';
import type { BearerSource } from './http-transport.js';
import type { ElicitSink } from './elicit-handler.js';
import type { NoticeSink } from './server-notices.js';
import type { Failure } from './failure.js';
import type { RefreshLimits } from './refresh-throttle.js';
import type { ProcessTracker, StopLadder } from './stdio-transport.js';
import type { Redact, StderrTail } from './stderr-tail.js';
import type { TransportFactory } from './transports.js';

/** A server that keeps answering with a nextCursor is cut off here. */
export const MAX_TOOL_PAGES = 100;

/** A server that keeps announcing tool-list changes while its list is being read is cut off here. */
export const MAX_REFRESH_ROUNDS = 16;

/** A server's own error message is kept to this many characters (after redaction). */
export const MAX_REMOTE_MESSAGE_CHARS = 1000;

/** What a Connection (connection.ts) is told and tells: its options and its hooks. */
export interface ConnectionHooks {
  spawned(pid: number | null): void;
  initialized(): void;
  /** A complete, checked tool list; throws (LIMIT_EXCEEDED) to refuse it. */
  discovered(tools: CatalogTool[], server: { name: string; version: string; protocolVersion: string }, toolListVersion: number): void;
  /** The connection failed on its own (exit, protocol error, failed refresh; lost authorization: an AuthRequired with the scope asked for). */
  failed(failure: Failure): void;
}

export interface ConnectionOptions {
  readonly version: string;
  readonly ladder: StopLadder;
  readonly stderr: StderrTail;
  readonly searchPath: string | undefined;
  /** stdio: the service's own variables. http: its header values. */
  readonly env: Readonly<Record<string, string>>;
  /** http with OAuth: the saved login (its access token on every request, renewed on a 401). */
  readonly bearer?: BearerSource | undefined;
  /** Known secret values out of what a server says (error messages, stdout excerpts). */
  readonly redact: Redact;
  /** stdio: told when the server's process group starts and when it is empty again. */
  readonly tracker?: ProcessTracker | undefined;
  /** How the server is reached (default: local servers spawned, remote ones over streamable HTTP). */
  readonly transports?: TransportFactory | undefined;
  /** The service's latest tool-list version before this connection: this one counts on from it. */
  readonly toolListVersionBase?: number | undefined;
  /** Where the server's elicitation requests go (none: the capability is never declared). */
  readonly elicit?: ElicitSink | undefined;
  /** Where the server's log messages and resource and list changes go (none: not relayed). */
  readonly notices?: NoticeSink | undefined;
  /** How often list_changed may cause a refresh (default: LIMITS). */
  readonly refreshLimits?: RefreshLimits | undefined;
}
