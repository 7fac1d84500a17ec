import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { WispError } from '../core/index.js';
import { OutboundGuard, sameOrigin, type OutboundRules } from './outbound.js';

/** Every request to an authorization server or a resource's metadata ends within this. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;

/** What a server says in its metadata, cut short and on one line before it goes in a message. */
export function quoted(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 200));
}

/** The guard of one OAuth flow for the service at `ownUrl` (outbound.ts): bounded in time and size, aborted with `signal`. */
export function oauthGuard(ownUrl: string, rules: OutboundRules | undefined, signal?: AbortSignal): OutboundGuard {
  return new OutboundGuard({ ownUrl, rules, signal, timeoutMs: OAUTH_REQUEST_TIMEOUT_MS });
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
 * RFC 9728 then RFC 8414 discovery, every request through `guard`, with the checks the SDK
 * leaves out:
 * - the resource metadata URL a 401 names must be on the server's own origin (RFC 9728 §3
 *   puts it there): a server may not steer the daemon to another one;
 * - when the resource's metadata names an authorization server, that server's own metadata
 *   must state it as its issuer (RFC 8414 §3.3), or a server that serves someone else's
 *   metadata could collect the login;
 * - the endpoints the daemon will use are on that issuer's origin (endpointOrigins).
 * A server without resource metadata (the 2025-03-26 fallback) names no authorization server:
 * its own origin is the issuer. A refusal of the guard (an address, a size) is never taken
 * for "no resource metadata".
 */
export async function discoverChecked(
  serverUrl: string,
  resourceMetadataUrl: URL | undefined,
  guard: OutboundGuard,
  use: { readonly preRegistered: boolean },
): Promise<OAuthDiscoveryState> {
  if (resourceMetadataUrl !== undefined && !sameOrigin(resourceMetadataUrl, serverUrl)) throw offOrigin(serverUrl, resourceMetadataUrl);
  let resourceMetadata: OAuthDiscoveryState['resourceMetadata'];
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(serverUrl, resourceMetadataUrl !== undefined ? { resourceMetadataUrl } : undefined, guard.fetch);
  } catch (error) {
    if (error instanceof WispError) throw error;
    // RFC 9728 not offered: the server's own origin is the authorization server.
  }
  const named = resourceMetadata?.authorization_servers?.[0];
  const authorizationServerUrl = named ?? String(new URL('/', serverUrl));
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, { fetchFn: guard.fetch });
  } catch (error) {
    if (error instanceof WispError) throw error;
    throw new WispError('AUTH_FAILED', `the authorization server's metadata could not be read: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
  }
  const stated = metadata?.issuer;
  if (named !== undefined && stated !== undefined && !issuersMatch(named, stated)) {
    throw new WispError(
      'AUTH_FAILED',
      `issuer mismatch: the resource metadata names the authorization server ${quoted(named)}, but that server's metadata states the issuer ${quoted(stated)}; refused`,
    );
  }
  if (metadata !== undefined) endpointOrigins(metadata, authorizationServerUrl, use.preRegistered);
  return {
    authorizationServerUrl,
    ...(metadata !== undefined ? { authorizationServerMetadata: metadata } : {}),
    ...(resourceMetadata !== undefined ? { resourceMetadata } : {}),
    ...(resourceMetadataUrl !== undefined ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}),
  };
}

/** A resource metadata URL on another origin than the server's: refused, not requested. */
export function offOrigin(serverUrl: string, resourceMetadataUrl: URL): WispError {
  return new WispError(
    'DESTINATION_REFUSED',
    `${quoted(new URL(serverUrl).origin)} names its resource metadata on another origin (${quoted(resourceMetadataUrl.origin)}): not requested; ` +
      'resource metadata is read from the server\'s own origin only (RFC 9728)',
  );
}

/**
 * The endpoints an authorization server names are on its own origin: the browser's
 * authorization URL, the token endpoint and (for a client that registers itself) the
 * registration endpoint. One exception: with a pre-registered client (--client-id, chosen by
 * the user for that server) the authorization and token endpoints may be on another https
 * origin, as some large providers serve them (Google's token endpoint, oauth2.googleapis.com).
 * Every request still goes through the address rule (outbound.ts).
 */
export function endpointOrigins(metadata: AuthorizationServerMetadata, issuer: string, preRegistered: boolean): void {
  const fields = ['authorization_endpoint', 'token_endpoint', ...(preRegistered ? [] : ['registration_endpoint'])] as const;
  for (const field of fields) endpointOrigin(metadata, field, issuer, preRegistered && field !== 'registration_endpoint');
}

/** One endpoint of `metadata` on `issuer`'s origin (or, `crossHttps`, on any https origin); absent is fine (the SDK's default is on the issuer). */
export function endpointOrigin(metadata: AuthorizationServerMetadata, field: string, issuer: string, crossHttps: boolean): void {
  const value = (metadata as Record<string, unknown>)[field];
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(typeof value === 'string' ? value : JSON.stringify(value));
  } catch {
    url = undefined;
  }
  if (url !== undefined && (sameOrigin(url, issuer) || (crossHttps && url.protocol === 'https:'))) return;
  throw new WispError(
    'DESTINATION_REFUSED',
    `the authorization server ${quoted(issuer)} names its ${field} ${url !== undefined ? `on another origin (${quoted(url.origin)})` : quoted(JSON.stringify(value))}: refused, nothing was sent there; ` +
      `its endpoints must be on its own origin${crossHttps ? ' or https' : ''} (docs/security.md)`,
  );
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
