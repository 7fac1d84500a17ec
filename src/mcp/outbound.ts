import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LIMITS, WispError } from '../core/index.js';
import { DISTANCE, addressClass, type AddressClass } from './address-class.js';

/**
 * The requests the daemon makes for a remote service besides its MCP connection (OAuth
 * discovery, registration, tokens, revocation, the login's probe) go through one guard:
 *
 * - a destination may be no nearer to this machine than the service's own URL: a public
 *   server's requests go to public addresses only; a server on the local network may
 *   reach that network (and the internet), not this machine's loopback nor link-local
 *   addresses; a server on this machine (loopback) may reach anything. Decided on the
 *   addresses a name resolves to, every one of them, and the connection is made to exactly
 *   those addresses (pinned: a name cannot resolve once to a public address for the check
 *   and then to 127.0.0.1 for the connection);
 * - redirects are never followed here (the SDK follows its own within one origin, each hop
 *   through this guard again);
 * - every response body is counted as it arrives and cut at 1 MB (LIMITS.maxStdioFrameBytes),
 *   `FRAME_TOO_LARGE`; every request ends within its timeout.
 */
export interface OutboundRules {
  /**
   * A test seam, never set by wispd's command line or configuration: endpoints
   * ("address:port") counted as public addresses, so that a test's 127.0.0.1 server can
   * stand for a server on the internet (and a request it steers to another loopback port is
   * refused as it would be in production).
   */
  readonly countAsPublic?: readonly string[];
  /** DNS for names (default: the system resolver, every address). A test seam too. */
  readonly resolve?: (hostname: string) => Promise<readonly string[]>;
}

export interface OutboundOptions {
  /** The URL the user configured (the service's, or an identity provider's): how near its requests may go. */
  readonly ownUrl: string;
  readonly rules?: OutboundRules | undefined;
  /** Aborts every request of this guard. */
  readonly signal?: AbortSignal | undefined;
  /** Each request (headers and body) ends within this. */
  readonly timeoutMs: number;
  /** Each response body is cut at this many bytes (default: the 1 MB frame limit). */
  readonly maxBytes?: number;
}

const NAMES: Record<AddressClass, string> = { loopback: 'a loopback address', 'link-local': 'a link-local address', private: 'a private address', public: 'a public address', reserved: 'a reserved address' };

/** One flow's guard (a login, a refresh, an activation's discovery): names resolve once in it, and stay pinned. */
export class OutboundGuard {
  readonly fetch: FetchLike = (url, init) => this.send(new URL(String(url)), init);
  private readonly resolved = new Map<string, Promise<readonly string[]>>();
  private ownDistance: Promise<number> | undefined;
  private readonly agent: Agent;

  constructor(private readonly options: OutboundOptions) {
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      // Only names this guard has checked are connected to, at the addresses it checked.
      void (this.resolved.get(hostname) ?? Promise.reject(new WispError('DESTINATION_REFUSED', `${hostname} was not checked before connecting`))).then(
        (addresses) => {
          const all = addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
          const first = all[0];
          if (lookupOptions.all === true) callback(null, all);
          else if (first !== undefined) callback(null, first.address, first.family);
          else callback(new Error(`${hostname} has no address`), '', 4);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), '', 4),
      );
    };
    this.agent = new Agent({ connect: { lookup }, keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
  }

  /** Ends this guard's connections, any body left unread with them (called once its flow is over; idle ones also close after a second). */
  close(): Promise<void> {
    return this.agent.destroy().catch(() => undefined);
  }

  private async send(url: URL, init: RequestInit | undefined): Promise<Response> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(`${quote(url.href)} is not an http(s) URL: not requested`);
    await this.check(url);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = AbortSignal.any([timeout, ...(this.options.signal !== undefined ? [this.options.signal] : []), ...(init?.signal != null ? [init.signal] : [])]);
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      // undici's own RequestInit: the same fields, typed apart from the DOM's.
      response = await undiciFetch(url, { ...(init as object), redirect: 'manual', signal, dispatcher: this.agent });
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof WispError ? cause : error;
    }
    return this.capped(url, response);
  }

  /** Every address of `url`'s host is no nearer than the service's own, or the request is refused before anything is sent. */
  private async check(url: URL): Promise<void> {
    const own = await (this.ownDistance ??= this.distanceOf(new URL(this.options.ownUrl)));
    const port = portOf(url);
    for (const address of await this.addresses(url.hostname)) {
      const kind = this.classOf(address, port);
      if (kind === 'reserved' || DISTANCE[kind] < own) {
        const whose = new URL(this.options.ownUrl).origin;
        throw refused(
          `${quote(url.origin)} is ${NAMES[kind]} (${address})${kind === 'reserved' ? '' : `, nearer to this machine than ${quote(whose)}`}: not requested. ` +
            'A remote service\'s OAuth requests go no nearer than its own URL (docs/security.md)',
        );
      }
    }
  }

  /** How far the configured URL is: its farthest address (a name with one public address counts as public). */
  private async distanceOf(url: URL): Promise<number> {
    const port = portOf(url);
    let distance = DISTANCE.loopback;
    for (const address of await this.addresses(url.hostname)) {
      const kind = this.classOf(address, port);
      distance = Math.max(distance, kind === 'reserved' ? DISTANCE.public : DISTANCE[kind]);
    }
    return distance;
  }

  private classOf(address: string, port: string): AddressClass {
    const endpoint = net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
    return this.options.rules?.countAsPublic?.includes(endpoint) === true ? 'public' : addressClass(address);
  }

  /** The addresses of a host, resolved once per guard (the connection uses exactly these). */
  private addresses(hostname: string): Promise<readonly string[]> {
    const bare = hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) !== 0) return Promise.resolve([bare]);
    let found = this.resolved.get(hostname);
    if (found === undefined) {
      const resolve = this.options.rules?.resolve ?? systemResolve;
      found = resolve(hostname).then((list) => {
        if (list.length === 0) throw new Error(`${hostname} has no address`);
        return list;
      });
      found.catch(() => undefined);
      this.resolved.set(hostname, found);
    }
    return found;
  }

  /** The body counted as it arrives: over the limit (declared or streamed), FRAME_TOO_LARGE, and the rest is never read. */
  private capped(url: URL, response: Awaited<ReturnType<typeof undiciFetch>>): Response {
    const limit = this.options.maxBytes ?? LIMITS.maxStdioFrameBytes;
    const tooLarge = (): WispError =>
      new WispError('FRAME_TOO_LARGE', `${quote(url.origin)} sent a response over the ${limit}-byte limit for OAuth metadata and tokens; the rest was not read`, { limit });
    const init = { status: response.status, statusText: response.statusText, headers: new Headers([...response.headers]) };
    const body = response.body;
    if (body === null || [101, 204, 205, 304].includes(response.status)) {
      void body?.cancel().catch(() => undefined);
      return new Response(null, init);
    }
    if (Number(response.headers.get('content-length') ?? NaN) > limit) {
      void body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    let count = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        count += chunk.byteLength;
        if (count > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    });
    return new Response(body.pipeThrough(counter), init);
  }
}

function systemResolve(hostname: string): Promise<readonly string[]> {
  return new Promise((resolve, reject) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error !== null ? reject(error) : resolve(addresses.map((a) => a.address))));
  });
}

function portOf(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

function refused(message: string): WispError {
  return new WispError('DESTINATION_REFUSED', message);
}

/** A server's URL in a message: cut short and quoted. */
function quote(value: string): string {
  return JSON.stringify(value.slice(0, 200));
}

/** Whether two URLs share scheme, host and port. */
export function sameOrigin(a: string | URL, b: string | URL): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
