/**
 * The egress bridge: runs inside a sandboxed service's network namespace (bwrap
 * --unshare-net, where only the namespace's own loopback exists), in front of the server:
 *
 *     node egress-bridge.mjs --socket /run/wisp/egress.sock [--port N] [--no-proxy LIST] -- COMMAND [ARG...]
 *
 * It listens on 127.0.0.1:N (N=0, the default: a free port), carries each TCP connection
 * made there to the daemon's egress proxy (egress-proxy.ts) over the bind-mounted Unix
 * socket, byte for byte (the proxy does every check), then starts COMMAND (no shell) with
 * HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy = http://127.0.0.1:N, NO_PROXY and
 * no_proxy = LIST (default `localhost,127.0.0.1,::1`: inside the namespace those are the
 * namespace's own loopback, which reaches nothing of the host's, so a server that talks to
 * a helper it started there keeps doing so), and NODE_USE_ENV_PROXY=1 (Node honours it for
 * fetch() and http/https.request from 24.5 and 22.21, fetch() alone in earlier 24 releases;
 * older Nodes ignore it, and their fetch() and http module then go nowhere: there is no
 * route and no resolver in the namespace).
 *
 * stdin, stdout and stderr are the server's own (inherited, never read or copied here: the
 * MCP frames pass untouched); the bridge writes only to stderr, only when it fails. It
 * forwards SIGTERM, SIGINT and SIGHUP to the server, ends when the server exits, with its
 * status (a signal is raised again on itself), and kills the server if it fails itself. A
 * SIGKILL of the bridge cannot be caught: the server then ends with the sandbox's pid
 * namespace (bwrap --unshare-pid: its init ends everything when the bridge, its only
 * child, is gone).
 *
 * A standalone module (node: built-ins only, ESM by its .mjs name) so that the sandbox binds
 * this one file and nothing else of Wisp's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';

interface BridgeArgs {
  readonly socket: string;
  readonly port: number;
  readonly noProxy: string;
  readonly command: readonly [string, ...string[]];
}

const USAGE = 'usage: egress-bridge.mjs --socket PATH [--port N] [--no-proxy LIST] -- COMMAND [ARG...]';
const DEFAULT_NO_PROXY = 'localhost,127.0.0.1,::1';
const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

function parseArgs(argv: readonly string[]): BridgeArgs | string {
  let socket: string | undefined;
  let port = 0;
  let noProxy = DEFAULT_NO_PROXY;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    if (flag === '--') {
      const [command, ...args] = argv.slice(i + 1);
      if (command === undefined || command === '') return 'no COMMAND after --';
      if (socket === undefined) return '--socket is required';
      return { socket, port, noProxy, command: [command, ...args] };
    }
    const value = argv[i + 1];
    if (value === undefined) return `${flag ?? ''} needs a value`;
    if (flag === '--socket') socket = value;
    else if (flag === '--no-proxy') noProxy = value;
    else if (flag === '--port' && /^[0-9]{1,5}$/.test(value) && Number(value) <= 65535) port = Number(value);
    else return `unknown or bad argument ${JSON.stringify(flag)}`;
  }
  return 'no -- before COMMAND';
}

/** One connection made to the bridge, carried to the proxy's socket; either side failing or closing ends both. */
function carry(client: net.Socket, socketPath: string): void {
  const proxy = net.connect({ path: socketPath, allowHalfOpen: true });
  const end = (): void => {
    client.destroy();
    proxy.destroy();
  };
  client.on('error', end);
  proxy.on('error', end);
  client.on('close', end);
  proxy.on('close', end);
  client.pipe(proxy);
  proxy.pipe(client);
}

function listen(port: number, socketPath: string): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => carry(client, socketPath));
  server.maxConnections = 512;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address !== null ? address.port : port });
    });
  });
}

function childEnv(port: number, noProxy: string): NodeJS.ProcessEnv {
  const proxy = `http://127.0.0.1:${port}`;
  return { ...process.env, HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: noProxy, no_proxy: noProxy, NODE_USE_ENV_PROXY: '1' };
}

function fail(message: string, status: number): never {
  process.stderr.write(`wisp egress bridge: ${message}\n`);
  process.exit(status);
}

function run(child: ChildProcess, server: net.Server): void {
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  // The bridge failing must not leave the server running without it.
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.once('error', (error: NodeJS.ErrnoException) => fail(`could not start ${JSON.stringify(child.spawnargs[0] ?? '')}: ${error.code ?? error.message}`, error.code === 'ENOENT' ? 127 : 126));
  child.once('exit', (code, signal) => {
    server.close();
    if (signal !== null) {
      for (const forwarded of FORWARDED) process.removeAllListeners(forwarded);
      process.kill(process.pid, signal);
      // Not every signal ends a process (SIGCHLD, SIGURG...): the conventional status then.
      setImmediate(() => process.exit(128 + os.constants.signals[signal]));
      return;
    }
    process.exit(code ?? 1);
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (typeof args === 'string') fail(`${args}\n${USAGE}`, 64);
  let listening: { server: net.Server; port: number };
  try {
    listening = await listen(args.port, args.socket);
  } catch (error) {
    fail(`could not listen on 127.0.0.1:${args.port} (${(error as NodeJS.ErrnoException).code ?? String(error)}); is the network namespace's loopback up?`, 70);
  }
  const [command, ...rest] = args.command;
  const child = spawn(command, rest, { stdio: 'inherit', env: childEnv(listening.port, args.noProxy), shell: false });
  run(child, listening.server);
}

void main();
