import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { directoryProblem, isoTime } from '../../util/index.js';
import { authorize, connectPinned, connectTarget, endpoint, errorCode, forwardTarget, systemResolve, type EgressRefusalReason, type EgressResolve, type EgressTarget } from './egress-destination.js';
import type { EgressDecider } from './egress-grants.js';

/**
 * The daemon's egress proxy for one sandboxed service: an HTTP forward proxy (absolute
 * `http://` requests) and CONNECT proxy (anything else: https, wss, raw TCP) on a Unix
 * socket that the sandbox's bridge (egress-bridge.mts) reaches from inside the service's
 * network namespace. What it checks, and in which order, is egress-destination.ts.
 *
 * node:http and node:net, not a proxy library: the proxy must decide before any DNS, pin
 * the addresses it checked, count bytes on the destination's socket and answer each
 * refusal in its own words; the proxy packages (http-proxy, proxy-chain) resolve and
 * connect by name themselves. undici is a client and has no server side.
 *
 * Bounded: `maxConnections` proxied connections at once (tunnels, forwarded exchanges and
 * decisions still waiting, a human's among them), a request head of `maxHeaderBytes`, a
 * head within `headersTimeoutMs`, a name resolved and a destination's answer each within
 * `connectTimeoutMs`, and no byte either way for `idleTimeoutMs` closes the exchange. No
 * shell and no child process.
 */
export interface EgressLimits {
  readonly maxConnections: number;
  readonly maxHeaderBytes: number;
  readonly headersTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

export const EGRESS_LIMITS: EgressLimits = { maxConnections: 32, maxHeaderBytes: 16 * 1024, headersTimeoutMs: 10_000, connectTimeoutMs: 10_000, idleTimeoutMs: 5 * 60_000 };

/**
 * One record per connection the service asked for, allowed or not, when it ends: never its
 * contents, nor a forwarded request's method, path or headers (a URL carries tokens).
 * Bytes are counted on the destination's socket: `bytesUp` sent to it (for a forwarded
 * request, the request head the proxy wrote with its body), `bytesDown` received.
 */
export type EgressAuditRecord = {
  readonly serviceId: string;
  readonly via: 'connect' | 'forward';
  readonly host: string;
  readonly port: number;
  /** The address connected to (allowed), or the one refused (`near-address`). */
  readonly address?: string;
  readonly bytesUp: number;
  readonly bytesDown: number;
  readonly startedAt: string;
  readonly endedAt: string;
} & ({ readonly decision: 'allowed' } | { readonly decision: 'refused'; readonly reason: EgressRefusalReason; readonly message: string } | { readonly decision: 'failed'; readonly message: string });

/** What the CLI and panel show: a destination refused (with how to grant it), or a request the proxy could not read. */
export type EgressRefusal =
  | { readonly kind: 'destination'; readonly serviceId: string; readonly host: string; readonly port: number; readonly reason: EgressRefusalReason; readonly address?: string; readonly message: string; readonly hint?: string }
  | { readonly kind: 'request'; readonly serviceId: string; readonly reason: 'bad-request' | 'headers-too-large'; readonly message: string };

export interface EgressProxyOptions {
  readonly serviceId: string;
  /** The service's name, for the refusal's hint (`wispctl mcp allow <label> <host>`); the id when absent. */
  readonly label?: string;
  /** The socket's path; its directory is created 0700 if missing and must be private to this user. */
  readonly socketPath: string;
  readonly decide: EgressDecider;
  readonly onAudit: (record: EgressAuditRecord) => void;
  readonly onRefused?: (refusal: EgressRefusal) => void;
  readonly limits?: Partial<EgressLimits>;
  /** DNS for names (a test seam: default, the system resolver). */
  readonly resolve?: EgressResolve;
}

/** Linux cuts a socket path at 108 bytes (macOS 104) without an error. */
const MAX_SOCKET_PATH = 103;
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/** An answer the proxy gives instead of the destination's: status, RFC 9209 Proxy-Status error, text. */
interface ProxyAnswer {
  readonly status: number;
  readonly proxyStatus: string;
  readonly text: string;
}

/** A connection being opened: its start, the client's socket, and how the client is answered a refusal. */
interface Opening {
  readonly via: 'connect' | 'forward';
  readonly target: EgressTarget;
  readonly client: Duplex;
  readonly startedAt: Date;
  readonly answer: (answer: ProxyAnswer) => void;
}

export class EgressProxy {
  private readonly server: http.Server;
  private readonly limits: EgressLimits;
  private readonly clients = new Set<Duplex>();
  private readonly upstreams = new Set<net.Socket>();
  private readonly ending = new Set<Promise<void>>();
  private active = 0;
  private closed = false;

  /** Listens on `options.socketPath` (a stale socket there is replaced: the caller holds the daemon's lock). */
  static async listen(options: EgressProxyOptions): Promise<EgressProxy> {
    await prepareSocketPath(options.socketPath);
    const proxy = new EgressProxy(options);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(options.socketPath, () => {
        proxy.server.removeListener('error', reject);
        resolve();
      });
    });
    await fs.chmod(options.socketPath, 0o600);
    return proxy;
  }

  private constructor(private readonly options: EgressProxyOptions) {
    this.limits = { ...EGRESS_LIMITS, ...options.limits };
    this.server = http.createServer({
      maxHeaderSize: this.limits.maxHeaderBytes,
      headersTimeout: this.limits.headersTimeoutMs,
      requestTimeout: 0,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: Math.min(1_000, this.limits.headersTimeoutMs),
    });
    // A backstop on sockets (idle keep-alive ones among them); the bound that answers is maxConnections.
    this.server.maxConnections = this.limits.maxConnections * 4;
    this.server.on('connection', (socket: net.Socket) => this.track(this.clients, socket));
    // Whatever a handler did not foresee ends that client's connection, never the daemon.
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void this.forward(req, res).catch(() => res.destroy()));
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      if (isSocket(socket)) void this.tunnel(req, socket, head).catch(() => socket.destroy());
    });
    this.server.on('upgrade', (_req: http.IncomingMessage, socket: Duplex) => {
      if (isSocket(socket)) this.refuseRequest('bad-request', { status: 501, proxyStatus: 'http_request_error', text: 'an Upgrade through the forward proxy is not supported: tunnel it with CONNECT' }, rawAnswer(socket));
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      if (isSocket(socket)) this.clientError(error, socket);
    });
  }

  /** Proxied connections open now (tunnels, forwarded exchanges, decisions waiting). */
  get connections(): number {
    return this.active;
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  /** Stops listening, ends every connection (each gets its audit record before this resolves) and removes the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of [...this.clients, ...this.upstreams]) socket.destroy();
    await Promise.all([stopped, ...this.ending]);
    await fs.rm(this.options.socketPath, { force: true });
  }

  private track<T extends Duplex>(set: Set<T>, socket: T): void {
    set.add(socket);
    socket.once('close', () => set.delete(socket));
    socket.on('error', () => undefined);
  }

  /** A CONNECT: checked, connected, then the two sockets spliced until either ends. */
  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const startedAt = new Date();
    const target = connectTarget(req.url ?? '');
    const answer = rawAnswer(client);
    if (target === undefined) {
      this.refuseRequest('bad-request', { status: 400, proxyStatus: 'http_request_error', text: 'a CONNECT names host:port (an IPv6 address as [addr]:port)' }, answer);
      return;
    }
    const early = holdEarly(client, this.limits.maxHeaderBytes);
    const upstream = await this.open({ via: 'connect', target, client, startedAt, answer });
    const sent = Buffer.concat([head, early.take()]);
    if (upstream === undefined) return;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (sent.length > 0) upstream.write(sent);
    this.finishWith(upstream, { via: 'connect', target, client, startedAt, answer });
    client.pipe(upstream);
    upstream.pipe(client);
    // The client gone: nothing more to deliver. The destination done: what it sent is flushed, then the client's side ends.
    client.once('close', () => upstream.destroy());
    upstream.once('close', (hadError) => (hadError ? client.destroy() : endSocket(client)));
  }

  /** An absolute http:// request: checked, connected, sent on with the hop-by-hop headers dropped, and its answer streamed back. */
  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const startedAt = new Date();
    const parsed = forwardTarget(req.url ?? '');
    const answer = (reply: ProxyAnswer): void => {
      if (!res.headersSent) res.writeHead(reply.status, { 'content-type': 'text/plain; charset=utf-8', 'proxy-status': `wisp; error=${reply.proxyStatus}`, connection: 'close' });
      res.end(`${reply.text}\n`);
    };
    if ('problem' in parsed) {
      req.resume();
      this.refuseRequest('bad-request', { status: 400, proxyStatus: 'http_request_error', text: parsed.problem }, answer);
      return;
    }
    const opening: Opening = { via: 'forward', target: parsed.target, client: req.socket, startedAt, answer };
    const upstream = await this.open(opening);
    if (upstream === undefined) {
      req.resume();
      return;
    }
    this.finishWith(upstream, opening);
    const headers = [...withoutHopByHop(req.rawHeaders), 'Host', parsed.authority, 'Connection', 'close'];
    const outgoing = http.request({ createConnection: () => upstream, method: req.method, path: parsed.path, headers, setHost: false, maxHeaderSize: this.limits.maxHeaderBytes });
    outgoing.on('response', (incoming) => {
      incoming.once('error', () => res.destroy());
      try {
        res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, withoutHopByHop(incoming.rawHeaders));
      } catch {
        // A status text or header Node will not send on (the destination's bytes): the exchange ends.
        res.destroy();
        upstream.destroy();
        return;
      }
      incoming.pipe(res);
    });
    outgoing.on('error', (error) => {
      if (!res.headersSent) answer({ status: 502, proxyStatus: 'http_protocol_error', text: `${endpoint(parsed.target.host, parsed.target.port)} answered no HTTP response (${errorCode(error)})` });
      else res.destroy();
    });
    res.once('close', () => upstream.destroy());
    req.pipe(outgoing);
  }

  /**
   * The shared steps of both kinds: a slot (or 503), the decision and the address rule
   * (egress-destination.ts), then the pinned connection. A refusal or failure is answered
   * and recorded here, and undefined returned.
   */
  private async open(opening: Opening): Promise<net.Socket | undefined> {
    const { target, client } = opening;
    const where = endpoint(target.host, target.port);
    if (this.closed || this.active >= this.limits.maxConnections) {
      const message = `${where} is refused: this service has its ${this.limits.maxConnections} connections open at once already`;
      this.refuse(opening, 'too-many-connections', undefined, message, 503);
      return undefined;
    }
    this.active += 1;
    let held = true;
    const release = (): void => {
      if (held) this.active -= 1;
      held = false;
    };
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    client.once('close', onClose);
    client.once('end', onClose);
    try {
      const decided = await authorize(target, this.options.decide, this.options.resolve ?? systemResolve, gone.signal, this.limits.connectTimeoutMs);
      if (!decided.ok) {
        release();
        if (decided.outcome === 'refused') this.refuse(opening, decided.reason, decided.address, decided.message, decided.status);
        else this.fail(opening, undefined, decided.message, { status: decided.status, proxyStatus: 'dns_error', text: `Wisp's egress proxy could not reach ${where}: ${decided.message}.` });
        return undefined;
      }
      const upstream = await connectPinned(target.host, target.port, decided.addresses, this.limits.connectTimeoutMs, gone.signal).catch((error: unknown) => {
        release();
        const message = `${where} did not connect (${errorCode(error)})`;
        this.fail(opening, undefined, message, { status: 502, proxyStatus: 'connection_refused', text: `Wisp's egress proxy: ${message}.` });
        return undefined;
      });
      if (upstream === undefined) return undefined;
      this.track(this.upstreams, upstream);
      upstream.once('close', release);
      upstream.setTimeout(this.limits.idleTimeoutMs, () => upstream.destroy());
      if (gone.signal.aborted || this.isClosed()) upstream.destroy();
      return upstream;
    } finally {
      client.removeListener('close', onClose);
      client.removeListener('end', onClose);
    }
  }

  /** The audit record of an allowed connection, written when its destination's socket closes. */
  private finishWith(upstream: net.Socket, opening: Opening): void {
    const address = upstream.remoteAddress;
    const ended = new Promise<void>((resolve) =>
      upstream.once('close', () => {
        this.audit(opening, { decision: 'allowed' }, address, upstream.bytesWritten, upstream.bytesRead);
        resolve();
      }),
    );
    this.ending.add(ended);
    void ended.then(() => this.ending.delete(ended));
  }

  private refuse(opening: Opening, reason: EgressRefusalReason, address: string | undefined, message: string, status: 403 | 503): void {
    const { host, port } = opening.target;
    const hint = hintFor(reason, this.label(), host, port);
    const proxyStatus = reason === 'near-address' ? 'destination_ip_prohibited' : reason === 'too-many-connections' ? 'connection_limit_reached' : 'http_request_denied';
    opening.answer({ status, proxyStatus, text: `Wisp's egress proxy: ${message}.${hint !== undefined ? `\nTo grant it: ${hint}` : ''}` });
    this.audit(opening, { decision: 'refused', reason, message }, address, 0, 0);
    this.options.onRefused?.({ kind: 'destination', serviceId: this.options.serviceId, host, port, reason, message, ...(address !== undefined ? { address } : {}), ...(hint !== undefined ? { hint } : {}) });
  }

  private fail(opening: Opening, address: string | undefined, message: string, answer: ProxyAnswer): void {
    opening.answer(answer);
    this.audit(opening, { decision: 'failed', message }, address, 0, 0);
  }

  private audit(opening: Opening, outcome: { readonly decision: 'allowed' } | { readonly decision: 'refused'; readonly reason: EgressRefusalReason; readonly message: string } | { readonly decision: 'failed'; readonly message: string }, address: string | undefined, bytesUp: number, bytesDown: number): void {
    const { host, port } = opening.target;
    const record: EgressAuditRecord = { serviceId: this.options.serviceId, via: opening.via, host, port, ...(address !== undefined ? { address } : {}), bytesUp, bytesDown, startedAt: isoTime(opening.startedAt), endedAt: new Date().toISOString(), ...outcome };
    try {
      this.options.onAudit(record);
    } catch {
      // A failing audit sink must not leave a client's socket hanging; the daemon's sink logs its own errors.
    }
  }

  /** A request the proxy could not take (no destination in it): answered, and reported. */
  private refuseRequest(reason: 'bad-request' | 'headers-too-large', answer: ProxyAnswer, reply: (answer: ProxyAnswer) => void): void {
    reply(answer);
    this.options.onRefused?.({ kind: 'request', serviceId: this.options.serviceId, reason, message: answer.text });
  }

  /** A request head that did not parse, or went over the size cap: 431 or 400, and the socket closed. A reset client is only closed. */
  private clientError(error: NodeJS.ErrnoException, socket: net.Socket): void {
    const code = error.code ?? '';
    if (!code.startsWith('HPE_') || !socket.writable) {
      socket.destroy();
      return;
    }
    if (code === 'HPE_HEADER_OVERFLOW') {
      this.refuseRequest('headers-too-large', { status: 431, proxyStatus: 'http_request_error', text: `a request head is at most ${this.limits.maxHeaderBytes} bytes` }, rawAnswer(socket));
    } else {
      this.refuseRequest('bad-request', { status: 400, proxyStatus: 'http_request_error', text: 'the request did not parse as HTTP/1.1' }, rawAnswer(socket));
    }
  }

  /** Read anew after each await (a property read would be narrowed by the check before it). */
  private isClosed(): boolean {
    return this.closed;
  }

  private label(): string {
    return this.options.label ?? this.options.serviceId;
  }
}

/**
 * How the user grants what was not granted. None for an address refused after DNS: a name
 * that resolves near is what a hostile server tries, and the proxy does not suggest
 * granting that address (the user can, knowingly).
 */
function hintFor(reason: EgressRefusalReason, label: string, host: string, port: number): string | undefined {
  return reason === 'not-granted' ? `wispctl mcp allow ${label} ${grantText(host, port)}` : undefined;
}

/** The grant that would cover host:port, as the user types it (the web's ports need none). */
function grantText(host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return port === 443 || port === 80 ? shown : `${shown}:${port}`;
}

/**
 * Reads what a CONNECT's client sends while its tunnel is being decided (a TLS hello often
 * follows at once), up to `cap` bytes (then it waits unread), so that a client that goes
 * away is seen (its end is read after its data) and an `ask` question withdrawn.
 */
function holdEarly(client: net.Socket, cap: number): { take: () => Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= cap) client.pause();
  };
  client.on('data', onData);
  return {
    take: () => {
      client.removeListener('data', onData);
      client.pause();
      return Buffer.concat(chunks);
    },
  };
}

/** The server's sockets are net.Sockets (a Unix socket server); its events type them as Duplex, and anything else is destroyed. */
function isSocket(socket: Duplex): socket is net.Socket {
  if (socket instanceof net.Socket) return true;
  socket.destroy();
  return false;
}

/** Answers on a socket the HTTP server let go of (a CONNECT, an upgrade, a head that did not parse), then closes it. */
function rawAnswer(socket: net.Socket): (answer: ProxyAnswer) => void {
  return (answer) => {
    const body = `${answer.text}\n`;
    const head =
      `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status] ?? ''}\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nProxy-Status: wisp; error=${answer.proxyStatus}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
    endSocket(socket, head + body);
  };
}

/**
 * Ends the proxy's side (after `data`), reads and drops what the client still sends (closing
 * with unread bytes would reset the connection and lose the answer), and closes it when the
 * client ends its side, or two seconds later.
 */
function endSocket(socket: net.Socket, data?: string): void {
  if (socket.destroyed) return;
  if (data !== undefined && socket.writable) socket.end(data);
  else socket.end();
  socket.resume();
  socket.setTimeout(2_000, () => socket.destroy());
}

/** A raw header list without the hop-by-hop headers, nor those the Connection header names. */
function withoutHopByHop(raw: readonly string[]): string[] {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!named.has(name.toLowerCase()) && name.toLowerCase() !== 'host') kept.push(name, raw[i + 1] ?? '');
  }
  return kept;
}

/** The socket's directory private to this user (created 0700), and no file but a stale socket at the path. */
async function prepareSocketPath(socketPath: string): Promise<void> {
  if (!path.isAbsolute(socketPath)) throw new Error(`the egress socket path ${JSON.stringify(socketPath)} is not absolute`);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) throw new Error(`the egress socket path ${JSON.stringify(socketPath)} is over ${MAX_SOCKET_PATH} bytes (the system cuts longer ones)`);
  const dir = path.dirname(socketPath);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const problem = directoryProblem(await fs.lstat(dir), { private: true });
  if (problem !== undefined) throw new Error(`the egress socket's directory ${dir}: ${problem}`);
  const existing = await fs.lstat(socketPath).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing === undefined) return;
  if (!existing.isSocket()) throw new Error(`${socketPath} exists and is not a socket: not replaced`);
  await fs.rm(socketPath);
}
