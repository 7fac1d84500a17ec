import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LIMITS, WispError } from '../core/index.js';
import type { Failure, TransportFailure } from './failure.js';
import type { BearerSource } from './http-transport.js';
import { childEnvironment, checkCwd, resolveCommand } from './launch.js';
import type { Redact, StderrTail } from './stderr-tail.js';
import { StdioTransport, type ProcessTracker, type StdioLaunch, type StopLadder } from './stdio-transport.js';
import type { SandboxProfile, StoredService } from './service-store.js';
import type { OutboundRules } from './outbound.js';
import type { Sandboxes } from './sandbox/sandboxes.js';

export { transportLink } from './link.js';

/** What to connect to: one service, as launched (`${VAR}` templates filled in), with its secrets. */
export interface ServiceLaunch {
  readonly config: StoredService;
  /** stdio: the service's own variables. http: its header values. */
  readonly env: Readonly<Record<string, string>>;
  /** http with OAuth: the saved login (its access token on every request, renewed on a 401). */
  readonly bearer?: BearerSource | undefined;
}

/** What the connection hands a factory besides the launch: its limits, its sinks and its hooks. */
export interface TransportContext {
  /** The activation's: aborted when the service is stopped meanwhile. */
  readonly signal: AbortSignal;
  readonly ladder: StopLadder;
  /** The daemon's PATH, for bare command names. */
  readonly searchPath: string | undefined;
  /** Where a local server's stderr goes (bounded, in memory). */
  readonly stderr: StderrTail;
  /** Known secret values out of what a server says. */
  readonly redact: Redact;
  /** Told when a local server's process group starts and when it is empty again. */
  readonly tracker?: ProcessTracker | undefined;
  /** A limit tripped outside any request (a remote response too large): the connection fails now, once. */
  readonly onFailure: (failure: TransportFailure) => void;
  /** The address rule's test seam for a remote service's requests besides its connection (outbound.ts); none in production. */
  readonly outbound?: OutboundRules | undefined;
  /** Where sandboxed services are launched through (none: a sandboxed service fails SANDBOX_UNAVAILABLE). */
  readonly sandbox?: Sandboxes | undefined;
}

/** One opened transport with what a connection needs to know about it beyond the MCP `Transport`. */
export interface ServiceLink {
  /** local: the server is a process of ours (its close means it exited); remote: a server elsewhere. */
  readonly kind: 'local' | 'remote';
  readonly transport: Transport;
  /** A local server's process id (0 when unknown); null for a remote one. */
  readonly pid: number | null;
  /** Why the transport closed or refused to go on by itself, if it did. */
  readonly failure: TransportFailure | undefined;
  /** How a local server's process ended ('' while it runs, or when there is no process). */
  readonly exitInfo: string;
  /** The scope the server asked for in its last authorization challenge, if any. */
  readonly challengedScope: string | null;
  /** An error of this kind of transport in the catalog's terms (HTTP status, unreachable, login needed), or undefined. */
  explain(error: unknown): Failure | undefined;
  /** Whether the server forgot our session: a new link then carries the request once more. */
  sessionLost(error: unknown): boolean;
  /** Where the server says to log in, asked within a few seconds; null when unknown; rejects with a Failure when the server steered the question where the daemon does not go. */
  authorizationServer(): Promise<string | null>;
  /** Down the stop ladder (`force`: at once); resolves once the server is gone. Idempotent. */
  stop(force: boolean): Promise<void>;
  /**
   * For a server that refused the 2025 handshake for the 2026 revision: the transport the 2026
   * connection goes on (started by its Client), when it is not `transport` itself. Remote
   * streamable HTTP only: the successor SDK's transport sends the Mcp-Method/Mcp-Name headers
   * the revision requires; stdio speaks 2026 on the same pipes.
   */
  modern?(): Promise<Transport>;
}

/**
 * The seam between a connection and how it reaches its server: given a service's launch,
 * an opened (started) link. The default spawns local servers and dials remote ones; tests
 * hand in-process servers over the SDK's in-memory transport.
 */
export type TransportFactory = (launch: ServiceLaunch, context: TransportContext) => Promise<ServiceLink>;

/** stdio services as child processes in their own process group, http services over streamable HTTP, sse ones over legacy HTTP+SSE. */
export const openTransport: TransportFactory = async (launch, context) => {
  const { transport } = launch.config;
  if (transport !== 'http' && transport !== 'sse') return openLocal(launch, context);
  // The remote transports come with the first remote service: with them the SDK's streamable
  // HTTP, SSE and auth modules (about 1 MB of heap a daemon of local servers never needs).
  const remote = await import('./remote-transports.js');
  context.signal.throwIfAborted();
  return transport === 'http' ? remote.openRemote(launch, context) : remote.openSse(launch, context);
};

/** The default factory, with the outbound rules every remote service's requests are checked under and the daemon's sandbox. */
export function defaultTransports(outbound: OutboundRules | undefined, sandbox?: Sandboxes): TransportFactory {
  return (launch, context) => openTransport(launch, { ...context, ...(outbound !== undefined ? { outbound } : {}), ...(sandbox !== undefined ? { sandbox } : {}) });
}

/** A sandboxed service's launch through the daemon's sandbox; never the direct one. */
async function sandboxed(name: string, launch: ServiceLaunch, profile: SandboxProfile, direct: StdioLaunch, context: TransportContext): Promise<StdioLaunch> {
  if (context.sandbox === undefined) throw new WispError('SANDBOX_UNAVAILABLE', `${name} is sandboxed, and this daemon has no sandbox to launch it in. Nothing ran.`);
  return (await context.sandbox.get()).wrap(name, launch.config, profile, direct, context.searchPath);
}

async function openLocal(launch: ServiceLaunch, context: TransportContext): Promise<ServiceLink> {
  const { config } = launch;
  await checkCwd(config.cwd);
  const command = await resolveCommand(config.command, context.searchPath);
  const direct: StdioLaunch = { command, args: config.args, cwd: config.cwd ?? undefined, env: childEnvironment(launch.env) };
  const profile = config.sandbox;
  const stdio = profile?.enabled === true ? await sandboxed(config.name, launch, profile, direct, context) : direct;
  const transport = new StdioTransport(
    stdio,
    { maxFrameBytes: LIMITS.maxStdioFrameBytes, maxFrameNesting: LIMITS.maxServerMessageNesting, ladder: context.ladder, stderr: context.stderr, redact: context.redact, tracker: context.tracker },
  );
  try {
    context.signal.throwIfAborted();
    await transport.start();
  } catch (error) {
    // Nothing runs: what the sandbox made for this launch (a private directory, an egress proxy) goes now.
    stdio.sandbox?.onEnd?.();
    throw error;
  }
  return {
    kind: 'local',
    transport,
    pid: transport.pid ?? 0,
    get failure() {
      return transport.failure;
    },
    get exitInfo() {
      return transport.exitInfo;
    },
    challengedScope: null,
    explain: () => undefined,
    sessionLost: () => false,
    authorizationServer: () => Promise.resolve(null),
    stop: (force) => transport.stop(force),
  };
}

