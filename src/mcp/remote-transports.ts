import { UnauthorizedError, discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { LIMITS, WispError } from '../core/index.js';
import { AuthRequired, Failure } from './failure.js';
import { HttpTransport } from './http-transport.js';
import { OutboundGuard, sameOrigin, type OutboundRules } from './outbound.js';
import { SseTransport } from './sse-transport.js';
import type { ServiceLaunch, ServiceLink, TransportContext } from './transports.js';

/**
 * The remote transports (streamable HTTP, legacy HTTP+SSE) as links, and what their errors
 * mean. Loaded by transports.ts with the first remote service, not with the first activation.
 */

export function openRemote(launch: ServiceLaunch, context: TransportContext): ServiceLink {
  const url = launch.config.url ?? '';
  const http = new HttpTransport({
    url,
    headers: launch.env,
    maxMessageBytes: LIMITS.maxStdioFrameBytes,
    maxMessageNesting: LIMITS.maxServerMessageNesting,
    onFailure: context.onFailure,
    bearer: launch.bearer,
  });
  return {
    kind: 'remote',
    transport: http.inner,
    pid: null,
    get failure() {
      return http.failure;
    },
    exitInfo: '',
    get challengedScope() {
      return http.challenge?.scope ?? null;
    },
    explain: (error) => httpFailure(error, url, launch),
    sessionLost: (error) => error instanceof StreamableHTTPError && error.code === 404,
    authorizationServer: () => authorizationServerOf(url, http.challenge?.resourceMetadataUrl, context.outbound),
    stop: (force) => http.stop(force ? 0 : context.ladder.stdinGraceMs),
    modern: () => http.modern(),
  };
}

/** A legacy HTTP+SSE server: the same caps, headers and failures as streamable HTTP; no session to renew. */
export function openSse(launch: ServiceLaunch, context: TransportContext): ServiceLink {
  const url = launch.config.url ?? '';
  const sse = new SseTransport({ url, headers: launch.env, maxMessageBytes: LIMITS.maxStdioFrameBytes, maxMessageNesting: LIMITS.maxServerMessageNesting, onFailure: context.onFailure, bearer: launch.bearer });
  return {
    kind: 'remote',
    transport: sse.inner,
    pid: null,
    get failure() {
      return sse.failure;
    },
    exitInfo: '',
    get challengedScope() {
      return sse.challenge?.scope ?? null;
    },
    explain: (error) => sseFailure(error, url, launch) ?? httpFailure(error, url, launch),
    // A legacy session ends with its stream (see SseTransport): it is never renewed under a running call.
    sessionLost: () => false,
    authorizationServer: () => authorizationServerOf(url, sse.challenge?.resourceMetadataUrl, context.outbound),
    stop: () => sse.stop(),
  };
}

/** The SSE stream's own failures: the GET answered with an HTTP status, or a POST was refused. */
function sseFailure(error: unknown, url: string, launch: ServiceLaunch): Failure | undefined {
  const login = loginHint(launch);
  if (error instanceof SseError && typeof error.code === 'number') {
    if (error.code === 401 || error.code === 403) return new AuthRequired(`${url} refused the event stream (HTTP ${error.code})${login}`);
    return new Failure('SERVER_HTTP_ERROR', `${url} answered the event stream with HTTP ${error.code}`);
  }
  // No status: the stream could not be opened at all (refused, DNS, TLS).
  if (error instanceof SseError) return new Failure('SERVER_UNREACHABLE', `cannot reach ${url}: ${error.message.slice(0, 300)}`);
  const posted = error instanceof Error ? /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(error.message) : null;
  if (posted !== null) {
    const status = Number(posted[1]);
    if (status === 401 || status === 403) return new AuthRequired(`${url} refused a message (HTTP ${status})${login}`);
    return new Failure('SERVER_HTTP_ERROR', `${url} refused a message with HTTP ${status}`);
  }
  return undefined;
}

/** What a refusal for want of authorization adds: why the last renewal failed, and the login (when the service uses OAuth). */
function loginHint(launch: ServiceLaunch): string {
  const why = launch.bearer?.problem;
  return `${why !== undefined ? ` (${why})` : ''}: it needs authorization${launch.config.oauth?.enabled === true ? `: log in with wispctl mcp login ${launch.config.name}` : ''}`;
}

/** What a remote server's failures mean: unreachable, HTTP errors, a login needed. */
function httpFailure(error: unknown, url: string, launch: ServiceLaunch): Failure | undefined {
  const login = launch.config.oauth?.enabled === true ? `: log in with wispctl mcp login ${launch.config.name}` : '';
  if (error instanceof UnauthorizedError) return new AuthRequired(`${url} needs a login${login}`);
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401 || error.code === 403) {
      const why = launch.bearer?.problem;
      return new AuthRequired(`${url} refused the request (HTTP ${error.code})${why !== undefined ? ` (${why})` : ''}: it needs authorization${login}`);
    }
    return new Failure('SERVER_HTTP_ERROR', `${url} answered HTTP ${String(error.code)}: ${error.message.slice(0, 300)}`);
  }
  const status = successorStatus(error);
  if (status !== undefined) {
    // The 2026 transport's refusal (the successor SDK's SdkHttpError, by its shape: see successorStatus).
    if (status === 401 || status === 403) return new AuthRequired(`${url} refused the request (HTTP ${status}): it needs authorization${login}`);
    return new Failure('SERVER_HTTP_ERROR', `${url} answered HTTP ${status}: ${(error as Error).message.slice(0, 300)}`);
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return new Failure('SERVER_UNREACHABLE', `cannot reach ${url}: ${cause?.code ?? cause?.message ?? error.message}`);
  }
  return undefined;
}

/** The HTTP status of the successor SDK's SdkHttpError (told by its name: a value import would load that SDK with every remote service), else undefined. */
function successorStatus(error: unknown): number | undefined {
  if (!(error instanceof Error) || error.name !== 'SdkHttpError') return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

/**
 * Where a protected server says to log in (RFC 9728 metadata), within a few seconds, or null
 * when it does not say. Read through the outbound guard, from the server's own origin only: a
 * 401 that names its metadata elsewhere, an address nearer than the server's own or a
 * metadata body over 1 MB rejects with that Failure (the activation fails with it; nothing
 * was requested, or read, past it).
 */
async function authorizationServerOf(url: string, resourceMetadataUrl: URL | undefined, outbound: OutboundRules | undefined): Promise<string | null> {
  if (resourceMetadataUrl !== undefined && !sameOrigin(resourceMetadataUrl, url)) {
    throw new Failure(
      'DESTINATION_REFUSED',
      `${url} answered 401 naming its resource metadata on another origin (${JSON.stringify(resourceMetadataUrl.origin.slice(0, 200))}): not requested; resource metadata is read from the server's own origin only (RFC 9728)`,
    );
  }
  const guard = new OutboundGuard({ ownUrl: url, rules: outbound, timeoutMs: 3000 });
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(url, resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : undefined, guard.fetch);
    return metadata.authorization_servers?.[0] ?? null;
  } catch (error) {
    if (error instanceof WispError) throw new Failure(error.code, `${url}: ${error.message}`);
    return null;
  } finally {
    await guard.close();
  }
}
