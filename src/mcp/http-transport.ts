import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { NestingMeter } from '../util/index.js';
import type { TransportFailure } from './failure.js';
import { SseEventMeter } from './sse-meter.js';

export interface HttpTransportOptions {
  readonly url: string;
  /** Header values (secrets) from the store, sent with every request. */
  readonly headers: Readonly<Record<string, string>>;
  /** One JSON response, or one SSE event, larger than this fails the connection. */
  readonly maxMessageBytes: number;
  /** One JSON response, or one SSE event, nesting deeper than this fails the connection (measured on the text as it streams). */
  readonly maxMessageNesting: number;
  /** Called once when a limit trips: the connection fails itself (no retry loop). */
  readonly onFailure: (failure: TransportFailure) => void;
  /** OAuth: the saved login whose access token goes with every request (renewed once on a 401). */
  readonly bearer?: BearerSource | undefined;
  /** The fetch to wrap (default: the global one). */
  readonly fetch?: FetchLike | undefined;
}

/**
 * Where a remote service's access token comes from. The transport, not the SDK, answers a
 * 401: every request that got one waits for the same renewal (one refresh request per
 * service, however many calls were running), then is sent once more with the new token.
 */
export interface BearerSource {
  accessToken(): Promise<string | undefined>;
  /** The server refused `sent`: true once a newer token is saved (renewed now, or by another request meanwhile). */
  renew(sent: string): Promise<boolean>;
  /** Why the last renewal failed, if it did (said with the login it then needs). */
  readonly problem?: string | undefined;
}

/**
 * The SDK's streamable HTTP client transport, with our own fetch wrapper around it: the
 * SDK puts no bound on response sizes, so every response body is counted as it streams,
 * JSON whole and SSE per event, and cut at the limit (see the team's SDK notes).
 */
/** One reconnection attempt of a dropped SSE stream at most: a server that is down is a failure, not a loop. */
const RECONNECTION = { maxRetries: 1, initialReconnectionDelay: 500, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 };

export class HttpTransport {
  readonly inner: StreamableHTTPClientTransport;
  private tripped: TransportFailure | undefined;
  /** The last authorization challenge (401/403 WWW-Authenticate) the server sent. */
  challenge: { resourceMetadataUrl?: URL; scope?: string } | undefined;
  /** Every request's fetch: capped, with the saved login's token. */
  private readonly send: FetchLike;
  /** The 2026 revision's transport to the same server, once a server refused the 2025 handshake for it. */
  private successor: Transport | undefined;

  constructor(private readonly options: HttpTransportOptions) {
    const base = options.fetch ?? ((url: string | URL, init?: RequestInit) => fetch(url, init));
    const capped: FetchLike = async (url, init) => this.cap(await base(url, init));
    const bearer = options.bearer;
    this.send = bearer === undefined ? capped : withBearer(capped, bearer);
    this.inner = new StreamableHTTPClientTransport(new URL(options.url), {
      fetch: this.send,
      requestInit: { headers: { ...options.headers } },
      reconnectionOptions: RECONNECTION,
    });
  }

  /**
   * The successor SDK's streamable HTTP transport (2026-07-28: stateless POSTs, each with the
   * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers its envelope names), over the same
   * capped fetch, headers and login as the 2025 one; loaded with the first 2026 remote server.
   * Its redirects stay within the server's origin (the SDK's default).
   */
  async modern(): Promise<Transport> {
    const { StreamableHTTPClientTransport: Successor } = await import('@modelcontextprotocol/client');
    const transport = new Successor(new URL(this.options.url), { fetch: this.send, requestInit: { headers: { ...this.options.headers } }, reconnectionOptions: RECONNECTION });
    this.successor = transport;
    return transport;
  }

  get failure(): TransportFailure | undefined {
    return this.tripped;
  }

  /** Ends the server's session (DELETE), then closes; both bounded, both best effort. */
  async stop(graceMs: number): Promise<void> {
    if (this.inner.sessionId !== undefined) {
      await Promise.race([this.inner.terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    await this.inner.close().catch(() => undefined);
    await this.successor?.close().catch(() => undefined);
  }

  private trip(failure: TransportFailure): Error {
    if (this.tripped === undefined) {
      this.tripped = failure;
      this.options.onFailure(failure);
    }
    return new Error(failure.message);
  }

  private cap(response: Response): Response {
    if (response.status === 401 || response.status === 403) this.challenge = extractWWWAuthenticateParams(response);
    return capResponse(response, this.options, (failure) => this.trip(failure));
  }
}

/**
 * A response whose body is counted as it streams, JSON whole and SSE per event, and cut at
 * `limit` bytes or past `maxMessageNesting` levels of nesting (refused on the text, before
 * the SDK parses it): `trip` is told (and its error ends the body). Shared by both remote transports.
 */
export function capResponse(
  response: Response,
  caps: { readonly maxMessageBytes: number; readonly maxMessageNesting: number },
  trip: (failure: TransportFailure) => Error,
): Response {
  const limit = caps.maxMessageBytes;
  const body = response.body;
  if (body === null || [101, 204, 205, 304].includes(response.status)) return response;
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const sse = type.includes('text/event-stream');
  // Only what the SDK parses is measured for nesting: JSON and SSE (an HTML error page's braces are not JSON's).
  const measured = sse || type.includes('json');
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (!sse && declared > limit) {
    void body.cancel();
    throw trip({ code: 'FRAME_TOO_LARGE', message: `the server sent a ${declared}-byte response; the limit is ${limit} bytes` });
  }
  let count = 0;
  const nesting = new NestingMeter(caps.maxMessageNesting);
  const events = sse ? new SseEventMeter(limit, caps.maxMessageNesting) : null;
  const tooDeep = (): TransportFailure => ({
    code: 'PROTOCOL_ERROR',
    message: `the server sent ${sse ? 'an SSE event' : 'a response'} nested more than ${caps.maxMessageNesting} levels deep`,
  });
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform: (chunk, controller) => {
      let deep = false;
      if (events !== null) {
        // Each event on its own: its bytes, and the nesting of the lines that can reach the parser (SseEventMeter).
        const over = events.push(chunk);
        deep = over === 'nesting';
        if (over === 'size') count = limit + 1;
      } else {
        count += chunk.byteLength;
        deep = measured && nesting.push(chunk);
      }
      if (deep) {
        controller.error(trip(tooDeep()));
        return;
      }
      if (count > limit) {
        controller.error(trip({ code: 'FRAME_TOO_LARGE', message: `the server sent ${sse ? 'an SSE event' : 'a response'} over the ${limit}-byte limit` }));
        return;
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Each request with the current access token; on a 401, once more after the (shared) renewal. */
export function withBearer(send: FetchLike, bearer: BearerSource): FetchLike {
  const authorized = (init: RequestInit | undefined, token: string | undefined): RequestInit => {
    const headers = new Headers(init?.headers);
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
    return { ...init, headers };
  };
  return async (url, init) => {
    const token = await bearer.accessToken();
    const response = await send(url, authorized(init, token));
    if (response.status !== 401 || token === undefined || !(await bearer.renew(token))) return response;
    await response.body?.cancel().catch(() => undefined);
    return send(url, authorized(init, await bearer.accessToken()));
  };
}
