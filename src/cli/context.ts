import type { Command } from 'commander';
import { locatePaths, type WispClient, type WispPaths } from '../control/client.js';
import { WispError } from '../core/index.js';
import { connectClient } from './connect.js';
import { jsonForTerminal } from './render.js';
import { closest } from './suggest.js';

/** Where wispctl writes: one line at a time, to stdout and stderr. */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

interface GlobalOptions {
  socket?: string;
  dataDir?: string;
  json?: boolean;
  output?: 'json' | 'wide';
}

/** How a read command prints: its default text, more columns (-o wide), or JSON (-o json, --json). */
export type OutputFormat = 'text' | 'wide' | 'json';

/** What every command group gets from the program: output, the global flags, the daemon. */
export interface CliContext {
  readonly io: CliIo;
  /** --json or -o json was given. */
  readonly json: () => boolean;
  /** -o json|wide (--json is -o json). */
  readonly output: () => OutputFormat;
  /**
   * The socket and data dir, from --socket/--data-dir, the environment or the defaults; when
   * nothing is at that socket and none was named, the running daemon's socket pointer (control/socket-pointer.ts).
   */
  readonly paths: () => WispPaths;
  /**
   * paths() looked up afresh (the pointer read again): for a command that outlives one
   * daemon (`mcp serve`), so a daemon restarted on another socket is found.
   */
  readonly locate: () => WispPaths;
  /** Prints the value as JSON with --json or -o json, the wide text with -o wide (where there is one), else the human text. */
  readonly print: (value: unknown, human: () => string, wide?: () => string) => void;
  /** Runs fn with a connected client, closed after. */
  readonly withClient: <T>(fn: (client: WispClient) => Promise<T>) => Promise<T>;
  /** Flags that make a started or installed daemon use the same data dir and socket as this CLI. */
  readonly daemonFlags: () => string[];
  /**
   * Flags that make an MCP client's `wispctl mcp serve` reach this daemon whatever environment
   * the client gives it: --data-dir when one was given, and always --socket.
   */
  readonly clientFlags: () => string[];
}

/**
 * A service name the daemon did not find (SERVICE_NOT_FOUND names it in details.name), with
 * the close registered name when there is one, as a mistyped command gets: `no service with
 * name fils; did you mean files?`. The names come from services.list on the same connection;
 * if that fails, the daemon's error is told as it was.
 */
async function withSuggestion(client: WispClient, error: unknown): Promise<unknown> {
  if (!(error instanceof WispError) || error.code !== 'SERVICE_NOT_FOUND' || typeof error.details.name !== 'string') return error;
  const given = error.details.name;
  const names = await client.call('services.list').then(
    ({ services }) => services.map((service) => service.name),
    () => [],
  );
  const near = closest(given, names);
  return near === undefined ? error : new WispError(error.code, `${error.message}; did you mean ${near}?`, error.details);
}

export function cliContext(program: Command, io: CliIo): CliContext {
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  const output = (): OutputFormat => (globals().json === true || globals().output === 'json' ? 'json' : globals().output === 'wide' ? 'wide' : 'text');
  const json = (): boolean => output() === 'json';
  // Located once per command: the pointer is read at most once, and every use sees one socket.
  let located: WispPaths | undefined;
  const locate = (): WispPaths => locatePaths({ socket: globals().socket, dataDir: globals().dataDir });
  const paths = (): WispPaths => (located ??= locate());
  const explicitData = (): boolean => globals().dataDir !== undefined || (process.env.WISP_HOME ?? '') !== '';
  return {
    io,
    json,
    output,
    paths,
    locate,
    print: (value, human, wide) => io.out(json() ? jsonForTerminal(value, 2) : output() === 'wide' && wide !== undefined ? wide() : human()),
    withClient: async (fn) => {
      const client = await connectClient(paths().socket);
      try {
        return await fn(client);
      } catch (error) {
        throw await withSuggestion(client, error);
      } finally {
        await client.close();
      }
    },
    daemonFlags: () => {
      const p = paths();
      const explicitSocket = globals().socket !== undefined || (process.env.WISP_SOCKET ?? '') !== '';
      return [...(explicitData() ? ['--data-dir', p.dataDir] : []), ...(explicitSocket ? ['--socket', p.socket] : [])];
    },
    clientFlags: () => {
      const p = paths();
      return [...(explicitData() ? ['--data-dir', p.dataDir] : []), '--socket', p.socket];
    },
  };
}
