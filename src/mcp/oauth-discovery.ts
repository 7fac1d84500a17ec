import { discoverOAuthServerInfo, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WispError } from '../core/index.js';

/** Every request to an authorization server or a resource's metadata ends within this. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;

/** What a server says in its metadata, cut short and on one line before it goes in a message. */
export function quoted(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 200));
}

/** The global fetch, bounded in time (and aborted with `signal`). */
export function timedFetch(signal?: AbortSignal): FetchLike {
  return (url, init) => {
    const timeout = AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS);
    return fetch(url, { ...init, signal: signal !== undefined ? AbortSignal.any([signal, timeout]) : timeout });
  };
}

/**
 * Two issuer identifiers as the SDK compares them: parsed as URLs, one trailing `/` of
 * difference tolerated (a URL's href gains one that an advertised value often lacks).
 */
export function issuersMatch(a: string, b: string): boolean {
  let [x, y] = [a, b];
  try {
    [x, y] = [new URL(a).href, new URL(b).href];
  } catch {
    // not two URLs: compared as written
  }
  return x === y || (x.endsWith('/') && x.slice(0, -1) === y) || (y.endsWith('/') && y.slice(0, -1) === x);
}

/**
 * RFC 9728 then RFC 8414 discovery, with the check the SDK leaves out: when the resource's
 * metadata names an authorization server, that server's own metadata must state it as its
 * issuer (RFC 8414 §3.3), or a server that serves someone else's metadata could collect the
 * login. A server without resource metadata (the 2025-03-26 fallback) names none: nothing to compare.
 */
export async function discoverChecked(serverUrl: string, resourceMetadataUrl: URL | undefined, signal?: AbortSignal): Promise<OAuthDiscoveryState> {
  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    info = await discoverOAuthServerInfo(serverUrl, { ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : {}), fetchFn: timedFetch(signal) });
  } catch (error) {
    throw new WispError('AUTH_FAILED', `the authorization server's metadata could not be read: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
  }
  const named = info.resourceMetadata?.authorization_servers?.[0];
  const stated = info.authorizationServerMetadata?.issuer;
  if (named !== undefined && stated !== undefined && !issuersMatch(named, stated)) {
    throw new WispError(
      'AUTH_FAILED',
      `issuer mismatch: the resource metadata names the authorization server ${quoted(named)}, but that server's metadata states the issuer ${quoted(stated)}; refused`,
    );
  }
  return { ...info, ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}) };
}

/**
 * RFC 9207: the `iss` a callback carries must be the issuer the login went to; a server that
 * advertises `authorization_response_iss_parameter_supported` must send one. A mix-up attack
 * (a code from another server) ends here.
 */
export function checkCallbackIssuer(discovery: OAuthDiscoveryState, iss: string | null): WispError | undefined {
  const metadata = discovery.authorizationServerMetadata;
  const issuer = metadata?.issuer;
  if (iss === null) {
    // Kept by the SDK's loose metadata schema, though not in its type.
    const promised = metadata !== undefined && (metadata as Record<string, unknown>)['authorization_response_iss_parameter_supported'] === true;
    if (promised) {
      return new WispError('AUTH_FAILED', `issuer mismatch: ${quoted(issuer)} promises an iss parameter in its callbacks (RFC 9207), and this callback carried none; refused`);
    }
    return undefined;
  }
  if (issuer === undefined || iss !== issuer) {
    return new WispError('AUTH_FAILED', `issuer mismatch: the callback names the issuer ${quoted(iss)}, but the login went to ${quoted(issuer ?? discovery.authorizationServerUrl)} (RFC 9207); refused`);
  }
  return undefined;
}
