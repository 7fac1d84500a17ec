import net from 'node:net';

/**
 * A sandboxed service's network grants, and the static decider built from them.
 *
 * A grant is written `host`, `host:port`, `[v6]`, `[v6]:port` or `*.domain[:port]`:
 *
 * - without a port it grants the web's two ports, 443 and 80, whichever way the client
 *   asks (a CONNECT tunnel, or a forwarded `http://` request: undici tunnels plain http by
 *   CONNECT too, so "443 for CONNECT, 80 for http" would refuse it for no gain: both are
 *   the same host's web ports). With a port, only that port.
 * - `*.example.com` grants every name under example.com at any depth (`api.example.com`,
 *   `a.b.example.com`), not example.com itself (grant that too if it is meant), and never an
 *   IP address. Its domain must have two labels at least (`*.com` is refused; a public
 *   suffix such as `*.co.uk` is not known here and is accepted: the grant is shown as
 *   written).
 * - an IP address grants exactly that address (no range). It is the one way to reach a
 *   loopback, link-local or private address (egress-proxy.ts): a name that resolves to one
 *   is refused whatever its grant says.
 *
 * Hosts are compared in one canonical form, the WHATWG URL parser's (lowercase; `127.1`,
 * `0x7f.1` and `2130706433` are 127.0.0.1; IPv6 compressed), with one trailing dot dropped,
 * so the grant and the request cannot differ only in spelling. Anything but letters, digits,
 * `-`, `_` and `.` in a name (or an IPv6 zone) is refused before it is compared or shown.
 */
export interface EgressGrant {
  /** The canonical host: a name (for a wildcard, the domain after `*.`), an IPv4 address, or an IPv6 address without brackets. */
  readonly host: string;
  readonly kind: 'name' | 'wildcard' | 'address';
  /** A port, or `web`: 443 and 80. */
  readonly port: number | 'web';
}

export type GrantParse = { readonly ok: true; readonly grant: EgressGrant } | { readonly ok: false; readonly reason: string };

/** A request's host in canonical form, and whether it is an IP address. */
export type CanonicalHost = { readonly kind: 'name' | 'address'; readonly host: string };

/** Whether the service may connect to `host:port`; `signal` aborts when the client has gone (an `ask` decider withdraws its approval). */
export type EgressDecider = (host: string, port: number, signal: AbortSignal) => Promise<EgressDecision>;
/**
 * `allow-resolved`: allowed wherever the name resolves, reserved and private addresses
 * included (never the unspecified ones). Only for a host the user configured themselves for
 * Wisp's own use, not for a service's grant: an install's registry (its URL is the user's
 * install settings), which a TLS-intercepting or corporate proxy may answer on an address
 * that is not public (this project's CI resolves registry.npmjs.org to 203.0.113.80).
 */
export type EgressDecision = 'allow' | 'allow-resolved' | 'deny';

const WEB_PORTS: readonly number[] = [443, 80];
const MAX_HOST = 253;

/** The canonical form of a host as a client or a grant wrote it (`[v6]` with brackets, or bare), or why it is no host. */
export function canonicalHost(text: string): CanonicalHost | { readonly kind: 'invalid'; readonly reason: string } {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (net.isIPv6(bare)) {
    if (bare.includes('%')) return { kind: 'invalid', reason: 'an IPv6 zone (%...) names an interface of this machine, not a host' };
    return { kind: 'address', host: parsedHostname(`[${bare}]`)?.slice(1, -1) ?? bare };
  }
  if (text.length === 0 || text.length > MAX_HOST) return { kind: 'invalid', reason: `a host has 1 to ${MAX_HOST} characters` };
  if (!/^[A-Za-z0-9._-]+$/.test(text)) return { kind: 'invalid', reason: 'a host name has only letters, digits, "-", "_" and "."' };
  const parsed = parsedHostname(text);
  if (parsed === undefined) return { kind: 'invalid', reason: 'not a host name' };
  if (net.isIPv4(parsed)) return { kind: 'address', host: parsed };
  const name = parsed.endsWith('.') ? parsed.slice(0, -1) : parsed;
  if (name.split('.').some((label) => label.length === 0 || label.length > 63)) return { kind: 'invalid', reason: 'each label of a host name has 1 to 63 characters' };
  return { kind: 'name', host: name };
}

function parsedHostname(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

/** A port as written: decimal digits, 1 to 65535. */
export function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** Splits `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address or `host` (the port is undefined when not written). */
export function splitHostPort(text: string): { readonly host: string; readonly port: string | undefined } | undefined {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const rest = text.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    return { host: text.slice(0, close + 1), port: rest === '' ? undefined : rest.slice(1) };
  }
  if (net.isIPv6(text)) return { host: text, port: undefined };
  const colon = text.lastIndexOf(':');
  return colon < 0 ? { host: text, port: undefined } : { host: text.slice(0, colon), port: text.slice(colon + 1) };
}

/** A grant as the user wrote it (`--allow-net`), or why it is not one. */
export function parseEgressGrant(text: string): GrantParse {
  const parts = splitHostPort(text.trim());
  if (parts === undefined) return { ok: false, reason: `${quote(text)} is not host[:port] (an IPv6 address is written [addr]:port)` };
  let port: number | 'web' = 'web';
  if (parts.port !== undefined) {
    const parsed = parsePort(parts.port);
    if (parsed === undefined) return { ok: false, reason: `${quote(text)}: the port is a number from 1 to 65535` };
    port = parsed;
  }
  const wildcard = parts.host.startsWith('*.');
  const host = canonicalHost(wildcard ? parts.host.slice(2) : parts.host);
  if (host.kind === 'invalid') return { ok: false, reason: `${quote(text)}: ${host.reason}` };
  if (wildcard) {
    if (host.kind === 'address') return { ok: false, reason: `${quote(text)}: a wildcard names a domain, not an IP address` };
    if (!host.host.includes('.')) return { ok: false, reason: `${quote(text)}: a wildcard's domain has two labels at least (*.example.com)` };
    return { ok: true, grant: { host: host.host, kind: 'wildcard', port } };
  }
  return { ok: true, grant: { host: host.host, kind: host.kind, port } };
}

/** A grant as it is shown (and stored, if the caller stores text): `api.example.com`, `*.example.com:8443`, `[::1]:3000`. */
export function formatEgressGrant(grant: EgressGrant): string {
  const host = grant.kind === 'wildcard' ? `*.${grant.host}` : net.isIPv6(grant.host) ? `[${grant.host}]` : grant.host;
  return grant.port === 'web' ? host : `${host}:${grant.port}`;
}

/** Whether `grant` covers a request to the canonical `host` at `port`. */
export function grantCovers(grant: EgressGrant, host: CanonicalHost, port: number): boolean {
  if (grant.port === 'web' ? !WEB_PORTS.includes(port) : grant.port !== port) return false;
  switch (grant.kind) {
    case 'wildcard':
      return host.kind === 'name' && host.host.endsWith(`.${grant.host}`);
    case 'name':
      return host.kind === 'name' && host.host === grant.host;
    case 'address':
      return host.kind === 'address' && host.host === grant.host;
  }
}

/**
 * The decider of a service whose network is a list of grants: allowed when one covers the
 * request, nothing asked. `grants` is read on every request, so a caller that holds a
 * mutable list (a grant added "always for this service") sees it at once.
 */
export function grantsDecider(grants: () => readonly EgressGrant[]): EgressDecider {
  return (host, port) => {
    const canonical = canonicalHost(host);
    if (canonical.kind === 'invalid') return Promise.resolve('deny');
    return Promise.resolve(grants().some((grant) => grantCovers(grant, canonical, port)) ? 'allow' : 'deny');
  };
}

interface Question {
  readonly decision: Promise<EgressDecision>;
  readonly withdraw: AbortController;
  waiting: number;
}

/**
 * The decider of a service whose network is `ask`: its grants first, then `ask` (the
 * daemon's `network.connect` approval) for anything they do not cover. Connections to the
 * same host and port while a question is open wait for that one answer (one prompt, not
 * one per connection); the question is withdrawn (its signal aborted) when every
 * connection waiting on it has gone. An answer "always for this service" is the caller's
 * to record in `grants`; a failing `ask` denies.
 */
export function askingDecider(grants: () => readonly EgressGrant[], ask: EgressDecider): EgressDecider {
  const covered = grantsDecider(grants);
  const open = new Map<string, Question>();
  return async (host, port, signal) => {
    if ((await covered(host, port, signal)) === 'allow') return 'allow';
    if (signal.aborted) return 'deny';
    const key = `${host} ${port}`;
    let question = open.get(key);
    if (question === undefined) {
      const withdraw = new AbortController();
      const decision = ask(host, port, withdraw.signal)
        .catch((): EgressDecision => 'deny')
        .finally(() => {
          if (open.get(key) === question) open.delete(key);
        });
      question = { decision, withdraw, waiting: 0 };
      open.set(key, question);
    }
    return wait(question, signal, () => {
      if (open.get(key) === question) open.delete(key);
    });
  };
}

/** One connection waiting on a question: its answer, or deny when this connection goes first (the last to go withdraws it). */
function wait(question: Question, signal: AbortSignal, forget: () => void): Promise<EgressDecision> {
  question.waiting += 1;
  return new Promise((resolve) => {
    const leave = (): void => {
      question.waiting -= 1;
      if (question.waiting === 0) {
        forget();
        question.withdraw.abort();
      }
      resolve('deny');
    };
    signal.addEventListener('abort', leave, { once: true });
    void question.decision.then((decision) => {
      if (signal.aborted) return;
      signal.removeEventListener('abort', leave);
      question.waiting -= 1;
      resolve(decision);
    });
  });
}

function quote(text: string): string {
  return JSON.stringify(text.slice(0, 100));
}
