import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WispError } from '../../core/index.js';
import type { StoredService } from '../service-store.js';
import { askingDecider, grantsDecider, parseEgressGrant, type EgressDecider, type EgressGrant } from './egress-grants.js';
import { egressSandboxParts, type EgressSandboxParts } from './egress-launch.js';
import type { McpEvent } from '../events.js';
import { EgressProxy, type EgressAuditRecord } from './egress-proxy.js';
import { within, type SandboxPlan } from './profile.js';

/**
 * One egress proxy per running sandboxed server whose network is host grants or `ask`:
 * started before its sandbox, in a private directory of its own (0700, never inside
 * anything the sandbox binds), and closed with its directory removed when the server ends
 * however it ends (sandbox/host.ts gives `close` as the launch's onEnd).
 */

/** A human's answer to a `network.connect` approval: this connection, every one to that host from now on, or no. */
export type NetworkAnswer = 'once' | 'always' | 'deny';

/** What the daemon wires the proxies to: its runtime directory, the service's grants now, the audit log, the events, the humans. */
export interface EgressWiring {
  /** A private directory of the daemon's (its socket's): each proxy's directory is made in it. */
  readonly runtimeDir: string;
  /** The service's configuration now (read on every connection: a grant given or revoked applies at once). */
  readonly service: (id: string) => StoredService | undefined;
  /** The audit log: one record per connection, when it ends (auditRecord). */
  readonly audit: (record: Record<string, unknown>) => void;
  /** Where a refusal is announced (network.refused). */
  readonly publish: (event: McpEvent) => void;
  /** `ask`: a connection no grant covers waits for this answer (none: refused). */
  readonly ask?: ((service: { readonly id: string; readonly name: string }, host: string, port: number, signal: AbortSignal) => Promise<NetworkAnswer>) | undefined;
  /** The bridge script (default: the one built beside egress-launch.js). */
  readonly bridgeFile?: string | undefined;
}

export interface RunningEgress {
  readonly parts: EgressSandboxParts;
  /** Closes the proxy (its connections end, each audited) and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/** Linux cuts a socket path at 108 bytes (macOS 104) without an error: egress-proxy.ts refuses longer. */
const MAX_SOCKET_PATH = 103;
const SOCKET_NAME = 'proxy.sock';

/** The host grants a service has now: its profile's and the live ones (`wispctl mcp allow`), parsed; one that does not parse grants nothing. */
export function serviceGrants(config: StoredService | undefined): EgressGrant[] {
  const net = config?.sandbox?.net;
  const texts = [...(net !== undefined && 'hosts' in net ? (net.hosts ?? []) : []), ...(config?.netGrants ?? [])];
  return texts.flatMap((text) => {
    const parsed = parseEgressGrant(text);
    return parsed.ok ? [parsed.grant] : [];
  });
}

export async function startEgress(config: StoredService, plan: SandboxPlan, wiring: EgressWiring): Promise<RunningEgress> {
  const dir = await privateDir(plan, wiring.runtimeDir);
  const grants = (): EgressGrant[] => serviceGrants(wiring.service(config.id));
  const { ask } = wiring;
  const service = { id: config.id, name: config.name };
  const decide: EgressDecider =
    config.sandbox?.net.mode === 'ask' && ask !== undefined
      ? askingDecider(grants, async (host, port, signal) => ((await ask(service, host, port, signal)) === 'deny' ? 'deny' : 'allow'))
      : grantsDecider(grants);
  let proxy: EgressProxy;
  try {
    proxy = await EgressProxy.listen({
      serviceId: config.id,
      label: config.name,
      socketPath: path.join(dir, SOCKET_NAME),
      decide,
      onAudit: (record) => wiring.audit(auditRecord(record, config.name)),
      onRefused: (refusal) => {
        // A request without a destination (one that did not parse) is answered 400 and is no one's to grant.
        if (refusal.kind !== 'destination') return;
        const { host, port, reason, message } = refusal;
        wiring.publish({ kind: 'network.refused', refusal: { service, host, port, reason, message, address: refusal.address ?? null, hint: refusal.hint ?? null } });
      },
    });
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw new WispError('SANDBOX_UNAVAILABLE', `${config.name}'s egress proxy could not start: ${(error as Error).message}. Nothing ran.`, { reason: 'egress proxy' });
  }
  let closing: Promise<void> | undefined;
  return {
    parts: egressSandboxParts({ socketPath: proxy.socketPath, ...(wiring.bridgeFile !== undefined ? { bridgeFile: wiring.bridgeFile } : {}) }),
    close: () => {
      closing ??= proxy
        .close()
        .catch(() => undefined)
        .then(() => fs.rm(dir, { recursive: true, force: true }));
      return closing;
    },
  };
}

/** A connection's line in the audit log (record "network"): who, where, how much each way, when; never what was sent. */
export function auditRecord(record: EgressAuditRecord, name: string): Record<string, unknown> {
  return { at: record.endedAt, record: 'network', service: name, ...record };
}

/**
 * A new 0700 directory for one proxy's socket: in the daemon's runtime directory, or the
 * system's temporary one when that path would be too long for a socket, or is inside
 * something the sandbox binds (a grant, its cwd): the server must not see the socket's
 * real directory, only the bind of the socket itself.
 */
async function privateDir(plan: SandboxPlan, runtimeDir: string): Promise<string> {
  const bound = (dir: string): boolean => plan.mounts.some((mount) => mount.access !== 'tmpfs' && within(dir, mount.path));
  // mkdtemp's six characters, the separator, the socket's name.
  const fits = (dir: string): boolean => Buffer.byteLength(path.join(dir, 'egress-XXXXXX', SOCKET_NAME)) <= MAX_SOCKET_PATH;
  const base = [runtimeDir, os.tmpdir()].find((dir) => path.isAbsolute(dir) && fits(dir) && !bound(dir));
  if (base === undefined) throw new WispError('SANDBOX_UNAVAILABLE', `no private directory for the egress proxy's socket: ${runtimeDir} and ${os.tmpdir()} are too long for a socket path, or visible in the sandbox. Nothing ran.`, { reason: 'egress socket' });
  return fs.mkdtemp(path.join(base, 'egress-'));
}
