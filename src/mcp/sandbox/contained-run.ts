import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { LIMITS, WispError } from '../../core/index.js';
import { resolveCommand } from '../launch.js';
import { bwrapArgs } from './bwrap.js';
import { egressSandboxParts } from './egress-launch.js';
import { grantsDecider, parseEgressGrant, type EgressDecider } from './egress-grants.js';
import { EgressProxy, type EgressRefusal } from './egress-proxy.js';
import type { SandboxHost } from './host.js';
import { planLaunch, type SandboxPlan } from './profile.js';
import { runtimeNeeds, systemLayout } from './runtime-needs.js';

/**
 * One command run contained, for the daemon's own helpers rather than a service: how
 * installs run npm (daemon/compose.ts injects it into the installer). The same bubblewrap
 * sandbox as a service's (host.ts, bwrap.ts: new user, pid, ipc, uts, cgroup and network
 * namespaces, a new session, no capabilities, death with the daemon, a root of its own with
 * the system's libraries read-only), seeing only what the request names; its one way out is
 * a standalone egress proxy of its own (egress-proxy.ts) that grants exactly one
 * `host:port` and refuses everything else, bridged into its network namespace
 * (egress-bridge.mts).
 */
export interface ContainedRunRequest {
  readonly command: string;
  readonly args: readonly string[];
  /** Its working directory: read-write. */
  readonly cwd: string;
  /** Its HOME: a private, empty directory (tmpfs). */
  readonly home: string;
  readonly write: readonly string[];
  readonly read: readonly string[];
  /** The one `host:port` it may reach, or null: no network (its own loopback only). */
  readonly egress: string | null;
  /** Added to its args when it has a proxy: how this command is told to use it. */
  readonly proxyArgs: (proxy: string) => readonly string[];
  readonly onRefused: (message: string) => void;
}

export interface ContainedRun {
  readonly command: string;
  readonly args: readonly string[];
  /** The plan it runs with (what it sees), for tests and the docs' claims. */
  readonly plan: SandboxPlan;
  /** bwrap writes its info (the sandbox's init pid) to fd 3: the run opens a pipe there and kills that pid on abort. */
  readonly infoFd: boolean;
  close(): Promise<void>;
}

export interface ContainOptions {
  /** A private directory for the proxy's socket (created 0700). */
  readonly socketDir: string;
  /** What it is, for messages: `installs`. */
  readonly label: string;
  /** The bridge script (default: the one built beside egress-launch.js). */
  readonly bridgeFile?: string;
}

/** The bridge's port inside: the network namespace is new, so any port is free there. */
const BRIDGE_PORT = 3128;

export async function containRun(host: SandboxHost, request: ContainedRunRequest, options: ContainOptions): Promise<ContainedRun> {
  const found = await host.availability();
  if (!found.available) throw unavailable(options.label, found.reason);
  if (found.kind !== 'bwrap') throw unavailable(options.label, 'npm is contained with bubblewrap (Linux) only: sandbox-exec is not used for installs yet');
  const which = (name: string): Promise<string | undefined> => resolveCommand(name, undefined).catch(() => undefined);
  const [{ needs }, system] = await Promise.all([runtimeNeeds({ command: request.command, args: request.args, cwd: request.cwd, home: request.home, which }), systemLayout()]);
  const plan = planLaunch({ enabled: true, read: [...request.read], write: [...request.write], net: { mode: 'none' } }, { home: request.home, cwd: request.cwd, system, needs, args: [] });
  const proxy = request.egress === null ? undefined : await startProxy(request, options);
  const parts = proxy === undefined ? undefined : egressSandboxParts({ socketPath: proxy.socketPath, noProxy: '', ...(options.bridgeFile !== undefined ? { bridgeFile: options.bridgeFile } : {}) });
  const args = [...request.args, ...(parts !== undefined ? request.proxyArgs(`http://127.0.0.1:${BRIDGE_PORT}`) : [])];
  // With a proxy the bridge runs in front: node bridge.mjs --socket S --no-proxy '' --port P -- command args.
  const egress = parts === undefined ? undefined : { bwrapArgs: parts.bwrapArgs, commandPrefix: [...parts.commandPrefix.slice(0, -1), '--port', String(BRIDGE_PORT), '--'] };
  return {
    command: found.bwrap,
    args: bwrapArgs(plan, { command: request.command, args, prlimit: found.prlimit, maxTasks: LIMITS.maxSandboxTasks, info: true, identity: false, egress }, found.features),
    plan,
    infoFd: true,
    close: () => proxy?.close() ?? Promise.resolve(),
  };
}

async function startProxy(request: ContainedRunRequest, options: ContainOptions): Promise<EgressProxy> {
  const grant = parseEgressGrant(request.egress ?? '');
  if (!grant.ok) throw new WispError('INVALID_CONFIG', `${options.label}: the registry's host cannot be granted: ${grant.reason}`);
  return EgressProxy.listen({
    serviceId: options.label,
    socketPath: path.join(options.socketDir, `${randomBytes(6).toString('hex')}.sock`),
    // The registry is the user's own setting: reached wherever its name resolves (a
    // TLS-intercepting proxy may answer on a reserved address), and only it.
    decide: registryDecider(grantsDecider(() => [grant.grant])),
    // Allowed connections need no record here: only the registry's host can be reached.
    onAudit: () => undefined,
    onRefused: (refusal) => request.onRefused(refusalText(refusal, request.egress ?? '')),
  });
}

function registryDecider(grants: EgressDecider): EgressDecider {
  return async (host, port, signal) => ((await grants(host, port, signal)) === 'allow' ? 'allow-resolved' : 'deny');
}

function refusalText(refusal: EgressRefusal, granted: string): string {
  if (refusal.kind === 'request') return `refused a request it could not read (${refusal.reason})`;
  const where = refusal.host.includes(':') ? `[${refusal.host}]:${refusal.port}` : `${refusal.host}:${refusal.port}`;
  return `refused a connection to ${where} (${refusal.reason}: only the registry, ${granted}, is reachable)`;
}

function unavailable(label: string, reason: string): WispError {
  return new WispError(
    'SANDBOX_UNAVAILABLE',
    `${label} run npm in a sandbox, and the sandbox cannot be had here: ${reason}. Nothing ran. Install bubblewrap (apt-get install bubblewrap, or your system's package) and allow unprivileged user namespaces, or turn the sandbox off for installs: wispctl install settings --no-sandbox (npm then runs as you, with your files and the whole network)`,
    { reason },
  );
}
