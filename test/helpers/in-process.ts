import { Writable } from 'node:stream';
import { WispClient } from '../../src/control/client.js';
import { resolvePaths } from '../../src/control/paths.js';
import { Daemon, createLogger, type DaemonOptions } from '../../src/daemon/index.js';
import { MemorySecretStore, Redactor, type SecretStore } from '../../src/secrets/index.js';
import { packageVersion } from '../../src/util/index.js';

export interface InProcessDaemon {
  readonly daemon: Daemon;
  /** Connected, ready to call. */
  readonly client: WispClient;
  readonly dataDir: string;
  readonly socket: string;
  /** The daemon's secret store: in memory unless one was given (pass it to a restart to keep what it holds). */
  readonly keychain: SecretStore;
  /** Resolves once the daemon has stopped (stop(), daemon.shutdown). */
  readonly stopped: Promise<void>;
  /** Everything the daemon logged, as written (one JSON line each). */
  readonly output: () => string;
  /** Another client on the daemon's socket. */
  readonly connect: () => Promise<WispClient>;
  /** Closes every client this helper opened and stops the daemon. Idempotent. */
  readonly stop: () => Promise<void>;
}

export interface InProcessOptions {
  /** The secret store (default: a new in-memory one, so no keyring is needed). */
  readonly keychain?: SecretStore;
  /** The daemon's own environment (default: PATH and HOME only, as a spawned wispd gets). */
  readonly env?: NodeJS.ProcessEnv;
  readonly ladder?: DaemonOptions['ladder'];
  /** The outbound rules' test seam (mcp/outbound.ts): endpoints counted as public. */
  readonly outbound?: DaemonOptions['outbound'];
}

/**
 * A real Daemon in the test process: its own data dir and socket (`<dataDir>/run/wispd.sock`),
 * a real socket server, and by default the in-memory secret store. Several can run at once
 * on different data dirs. For tests that need no process boundary (and no keyring).
 */
export async function startInProcess(dataDir: string, options: InProcessOptions = {}): Promise<InProcessDaemon> {
  const redactor = new Redactor();
  let logged = '';
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  const keychain = options.keychain ?? new MemorySecretStore();
  const env = options.env ?? { PATH: process.env.PATH, HOME: process.env.HOME };
  const daemon = await Daemon.start({
    // No WISP_* or XDG variable of the test process decides where this daemon lives.
    paths: resolvePaths({ dataDir, env: {} }),
    logger: createLogger({ level: 'info', pretty: false, redactor, destination }),
    redactor,
    version: packageVersion(),
    keychain,
    env,
    searchPath: env.PATH,
    ...(options.ladder !== undefined ? { ladder: options.ladder } : {}),
    ...(options.outbound !== undefined ? { outbound: options.outbound } : {}),
  });
  const socket = resolvePaths({ dataDir, env: {} }).socket;
  const clients: WispClient[] = [];
  const connect = async (): Promise<WispClient> => {
    const client = await WispClient.connect(socket);
    clients.push(client);
    return client;
  };
  let stopping: Promise<void> | undefined;
  return {
    daemon,
    client: await connect(),
    dataDir,
    socket,
    keychain,
    stopped: daemon.stopped,
    output: () => logged,
    connect,
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(clients.map((client) => client.close()));
        await daemon.stop('the test is over');
      })()),
  };
}
