import type { Command } from 'commander';
import { WispClient, resolvePaths, type WispPaths } from '../control/client.js';
import { jsonForTerminal } from './render.js';

/** Where wispctl writes: one line at a time, to stdout and stderr. */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

interface GlobalOptions {
  socket?: string;
  dataDir?: string;
  json?: boolean;
}

/** What every command group gets from the program: output, the global flags, the daemon. */
export interface CliContext {
  readonly io: CliIo;
  /** --json was given. */
  readonly json: () => boolean;
  /** The socket and data dir, from --socket/--data-dir, the environment or the defaults. */
  readonly paths: () => WispPaths;
  /** Prints the value as JSON with --json, else the human text. */
  readonly print: (value: unknown, human: () => string) => void;
  /** Runs fn with a connected client, closed after. */
  readonly withClient: <T>(fn: (client: WispClient) => Promise<T>) => Promise<T>;
  /** Flags that make a started or installed daemon use the same data dir and socket as this CLI. */
  readonly daemonFlags: () => string[];
}

export function cliContext(program: Command, io: CliIo): CliContext {
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  const json = (): boolean => globals().json === true;
  const paths = (): WispPaths => resolvePaths({ socket: globals().socket, dataDir: globals().dataDir });
  return {
    io,
    json,
    paths,
    print: (value, human) => io.out(json() ? jsonForTerminal(value, 2) : human()),
    withClient: async (fn) => {
      const client = await WispClient.connect(paths().socket);
      try {
        return await fn(client);
      } finally {
        await client.close();
      }
    },
    daemonFlags: () => {
      const p = paths();
      const explicitData = globals().dataDir !== undefined || (process.env.WISP_HOME ?? '') !== '';
      const explicitSocket = globals().socket !== undefined || (process.env.WISP_SOCKET ?? '') !== '';
      return [...(explicitData ? ['--data-dir', p.dataDir] : []), ...(explicitSocket ? ['--socket', p.socket] : [])];
    },
  };
}
