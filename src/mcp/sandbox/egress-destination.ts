import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { addressClass, type AddressClass } from '../address-class.js';
import { canonicalHost, parsePort, splitHostPort, type EgressDecider, type EgressDecision } from './egress-grants.js';

/** A lookup that took too long: a resolver-style errno name (like ENOTFOUND), shown in the 403 body, never a Wisp error code. */
const DNS_TIMEOUT = 'ETIMEOUT';

/**
 * Where a sandboxed service asked to go, and whether it may: the steps of one request, in
 * the order they happen (egress-proxy.ts calls `authorize`, then `connectPinned`):
 *
 * 1. the target (a CONNECT's `host:port`, a forwarded request's absolute `http://` URL) is
 *    parsed and its host put in canonical form (egress-grants.ts); anything else is a bad
 *    request;
 * 2. the decider (the service's grants, or a human for `ask`) answers for that host and
 *    port, **before the name is resolved**: a name is itself a way to leak a secret (a
 *    lookup of `<secret>.attacker.example` reaches the attacker's DNS server), so a name not
 *    granted is never looked up;
 * 3. a granted name is resolved (once), and every address it has must be public: a name
 *    that resolves to a loopback, link-local or private address (127/8, ::1, 169.254/16,
 *    fe80::/10, 10/8, 172.16/12, 192.168/16, 100.64/10 carrier-grade NAT, fc00::/7, and
 *    their IPv4-mapped, NAT64 and 6to4 forms) is refused, so that granting `api.example.com`
 *    never reaches this machine or its network when that name's DNS answers 127.0.0.1
 *    (rebinding). A host that *is* an address the decider allowed was granted by address:
 *    that is how a user lets a server reach a service on this machine or network. The
 *    unspecified addresses (0.0.0.0/8, ::), multicast and the other reserved ranges are
 *    never a destination, granted or not;
 * 4. the connection is made to exactly the addresses checked (pinned: the name is not
 *    resolved again, so it cannot answer a public address for the check and 127.0.0.1 for
 *    the connection), the first that answers within the connect timeout.
 */

/** A destination as a request names it: the canonical host, its port, and whether the host is an IP address. */
export interface EgressTarget {
  readonly host: string;
  readonly port: number;
  readonly byAddress: boolean;
}

export type EgressRefusalReason = 'not-granted' | 'near-address' | 'too-many-connections';

/** The outcome of steps 2 and 3: where to connect, or why not (with the HTTP status the client is answered). */
export type Authorization =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly outcome: 'refused'; readonly reason: EgressRefusalReason; readonly status: 403 | 503; readonly message: string; readonly address?: string }
  | { readonly ok: false; readonly outcome: 'failed'; readonly status: 502; readonly message: string };

/** DNS for names: every address of a name (a test seam; the default is the system resolver). */
export type EgressResolve = (host: string) => Promise<readonly string[]>;

const NEVER = new net.BlockList();
NEVER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER.addAddress('::', 'ipv6');

const NAMES: Record<AddressClass, string> = { loopback: 'a loopback address', 'link-local': 'a link-local address', private: 'a private address', public: 'a public address', reserved: 'a reserved address' };

/** A CONNECT request's authority (`host:port`, `[v6]:port`: the port is required), or undefined. */
export function connectTarget(authority: string): EgressTarget | undefined {
  const parts = splitHostPort(authority);
  if (parts?.port === undefined) return undefined;
  return target(parts.host, parts.port);
}

/** A forwarded request's absolute `http://` URL (the port defaults to 80), or why it cannot be forwarded. */
export function forwardTarget(url: string): { readonly target: EgressTarget; readonly path: string; readonly authority: string } | { readonly problem: string } {
  if (/^https:/i.test(url)) return { problem: 'https:// is not forwarded: a client tunnels it with CONNECT (HTTPS_PROXY)' };
  if (!/^http:\/\//i.test(url)) return { problem: 'this is a proxy: a request names an absolute http:// URL, or is a CONNECT' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: 'the URL does not parse' };
  }
  const found = target(parsed.hostname, parsed.port === '' ? '80' : parsed.port);
  if (found === undefined) return { problem: 'the URL names no valid host' };
  return { target: found, path: `${parsed.pathname}${parsed.search}`, authority: parsed.host };
}

function target(hostText: string, portText: string): EgressTarget | undefined {
  const port = parsePort(portText);
  const host = canonicalHost(hostText);
  if (port === undefined || host.kind === 'invalid') return undefined;
  return { host: host.host, port, byAddress: host.kind === 'address' };
}

/** How a target is shown: `api.example.com:443`, `[::1]:8080`. */
export function endpoint(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Steps 2 and 3: the decision (before any DNS), then the addresses' rule; a name resolves within `resolveMs`. */
export async function authorize(target: EgressTarget, decide: EgressDecider, resolve: EgressResolve, signal: AbortSignal, resolveMs = 10_000): Promise<Authorization> {
  const where = endpoint(target.host, target.port);
  let decision: EgressDecision;
  try {
    decision = await decide(target.host, target.port, signal);
  } catch {
    decision = 'deny';
  }
  if (decision === 'deny') return { ok: false, outcome: 'refused', reason: 'not-granted', status: 403, message: `${where} is not granted to this service` };
  let addresses: readonly string[];
  try {
    addresses = target.byAddress ? [target.host] : await within(resolve(target.host), resolveMs);
  } catch (error) {
    return { ok: false, outcome: 'failed', status: 502, message: `${target.host} did not resolve (${errorCode(error)})` };
  }
  if (addresses.length === 0) return { ok: false, outcome: 'failed', status: 502, message: `${target.host} has no address` };
  for (const address of addresses) {
    const problem = decision === 'allow-resolved' ? unspecifiedProblem(address) : addressProblem(address, target.byAddress);
    if (problem !== undefined) {
      const what = target.byAddress ? `it is ${problem}` : `${target.host} resolves to ${address}, ${problem}`;
      return { ok: false, outcome: 'refused', reason: 'near-address', status: 403, address, message: `${where} is refused: ${what}` };
    }
  }
  return { ok: true, addresses };
}

/** The system resolver has no timeout of its own: a name that never answers must not hold a connection slot for ever. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: DNS_TIMEOUT })), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Why an address is no destination for an `allow-resolved` host: only the unspecified addresses (and what is no address). */
function unspecifiedProblem(address: string): string | undefined {
  const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
  if (net.isIP(address) === 0 || NEVER.check(address, family)) return 'an unspecified address (it reaches this machine), never a destination';
  return undefined;
}

/** Why an address is no destination (undefined: it may be connected to). */
export function addressProblem(address: string, byAddress: boolean): string | undefined {
  const unspecified = unspecifiedProblem(address);
  if (unspecified !== undefined) return unspecified;
  const kind = addressClass(address);
  if (kind === 'reserved') return `${NAMES.reserved} (multicast, broadcast, documentation...), never a destination`;
  if (kind !== 'public' && !byAddress) return `${NAMES[kind]}, reached only when that address itself is granted`;
  return undefined;
}

/** The system resolver: every address of a name, in its order. */
export const systemResolve: EgressResolve = (host) =>
  new Promise((resolve, reject) => {
    dns.lookup(host, { all: true, verbatim: true }, (error, found) => (error !== null ? reject(error) : resolve(found.map((entry) => entry.address))));
  });

/** Step 4: a TCP connection to one of exactly `addresses` (Happy Eyeballs across them), within `timeoutMs`. */
export function connectPinned(host: string, port: number, addresses: readonly string[], timeoutMs: number, signal: AbortSignal): Promise<net.Socket> {
  const lookup: LookupFunction = (_name, options, callback) => {
    const all = addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
    if (options.all === true) callback(null, all);
    else callback(null, all[0]?.address ?? '', all[0]?.family ?? 4);
  };
  return new Promise((resolve, reject) => {
    const first = addresses[0] ?? '';
    // A name connects through the pinned lookup; a single address directly (no lookup is made for an IP).
    const socket = addresses.length === 1 ? net.connect({ host: first, port }) : net.connect({ host, port, lookup, autoSelectFamily: true });
    const fail = (error: Error): void => {
      signal.removeEventListener('abort', abort);
      socket.destroy();
      reject(error);
    };
    const abort = (): void => fail(new Error('the client went away'));
    signal.addEventListener('abort', abort, { once: true });
    socket.setTimeout(timeoutMs, () => fail(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      signal.removeEventListener('abort', abort);
      socket.setTimeout(0);
      socket.removeListener('error', fail);
      resolve(socket);
    });
  });
}

export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message.slice(0, 200) : 'error';
}
