import { randomBytes } from 'node:crypto';
import { auth, registerClient, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { WispError, type ConnectionState } from '../core/index.js';
import { LOGIN_TIMEOUT_MS } from './login-checks.js';
import { OAUTH_ITEMS, VaultOAuthProvider, listenForCallback, probeChallenge, type OAuthVault } from './oauth.js';
import { checkCallbackIssuer, discoverChecked, endpointOrigin, issuersMatch, oauthGuard, quoted } from './oauth-discovery.js';
import { machineLogin } from './oauth-machine.js';
import { OAuthSession } from './oauth-session.js';
import type { OutboundGuard, OutboundRules } from './outbound.js';
import type { StoredService } from './service-store.js';

export interface LoginOptions {
  /** The service's OAuth items (the keychain, bound to its URL). */
  readonly vault: OAuthVault;
  /** The server's URL as launched (`${VAR}` filled in from the daemon's environment). */
  readonly serverUrl: () => string;
  /** The service's connection now: a needs_auth state carries the scope the server last asked for. */
  readonly state: () => ConnectionState;
  /** Our version, for the probe's client info. */
  readonly version: string;
  /** The authorization URL is ready: a human opens it. */
  readonly announce: (authorizationUrl: string, redirectUri: string) => void;
  readonly signal: AbortSignal;
  readonly timeoutMs?: number;
  /** The address rule's test seam (outbound.ts); none in production. */
  readonly outbound?: OutboundRules | undefined;
}

/**
 * wispctl mcp login: a loopback listener armed first, the authorization URL announced, the
 * callback's state checked, the tokens saved in the vault. The caller activates afterwards.
 */
export async function login(config: StoredService, options: LoginOptions): Promise<void> {
  const { vault, signal } = options;
  if (config.oauth?.grant !== undefined) {
    await vault.delete(OAUTH_ITEMS.tokens);
    return machineLogin(config, vault, options.serverUrl(), options.outbound, signal);
  }
  const oauth = { clientId: config.oauth?.clientId ?? null, scopes: config.oauth?.scopes ?? null, clientMetadataUrl: config.oauth?.clientMetadataUrl ?? null };
  const previous = await vault.get(OAUTH_ITEMS.redirect);
  const expectedState = randomBytes(24).toString('base64url');
  const callback = await listenForCallback(expectedState, signal, previous !== null ? Number(new URL(previous).port) : 0);
  // Every request of this login (probe, discovery, registration, token) through one guard: names resolve once, and stay pinned.
  const guard = oauthGuard(options.serverUrl(), options.outbound, signal);
  try {
    // A client registered for another loopback port cannot use this one: register again.
    if (previous !== callback.redirectUri && oauth.clientId === null) await vault.delete(OAUTH_ITEMS.client);
    await vault.set(OAUTH_ITEMS.redirect, callback.redirectUri);
    let authorizationUrl: URL | undefined;
    const settings = { ...oauth, clientSecret: await clientSecret(config, vault) };
    const provider = new VaultOAuthProvider(vault, settings, callback.redirectUri, (url) => (authorizationUrl = url), expectedState);
    await vault.delete(OAUTH_ITEMS.tokens);
    const serverUrl = options.serverUrl();
    const challenge = await probeChallenge(serverUrl, options.version, guard);
    // Discovered (and its issuer and endpoints checked) once here; the SDK's flow uses this very result.
    const discovery = await discoverChecked(serverUrl, challenge.resourceMetadataUrl, guard, { preRegistered: oauth.clientId !== null });
    provider.discovery = discovery;
    callback.checkIssuer((iss) => checkCallbackIssuer(discovery, iss));
    const state = options.state();
    const scope = loginScope({
      asked: (state.status === 'needs_auth' ? state.scope : null) ?? challenge.scope ?? discovery.resourceMetadata?.scopes_supported?.join(' ') ?? null,
      configured: oauth.scopes,
      serverScopes: discovery.authorizationServerMetadata?.scopes_supported,
    });
    const where = { serverUrl, ...(scope !== undefined ? { scope } : {}), ...(challenge.resourceMetadataUrl !== undefined ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}), fetchFn: guard.fetch };
    await authStep(() => register(provider, discovery, scope, where.fetchFn));
    const first = await authStep(() => auth(provider, where));
    if (first === 'REDIRECT') {
      if (authorizationUrl === undefined) throw new WispError('AUTH_FAILED', 'the authorization server gave no authorization URL');
      options.announce(authorizationUrl.href, callback.redirectUri);
      const code = await withTimeout(callback.code, options.timeoutMs ?? LOGIN_TIMEOUT_MS);
      await authStep(() => auth(provider, { ...where, authorizationCode: code }));
    }
    await vault.delete(OAUTH_ITEMS.verifier);
  } finally {
    await callback.close();
    await guard.close();
  }
}

/** The saved login for an activation: only for an OAuth service that has logged in (tokens saved). */
export async function savedLogin(config: StoredService, vault: OAuthVault, serverUrl: () => string, outbound?: OutboundRules): Promise<OAuthSession | undefined> {
  if (config.oauth?.enabled !== true) return undefined;
  const [tokens, redirect] = await Promise.all([vault.get(OAUTH_ITEMS.tokens), vault.get(OAUTH_ITEMS.redirect)]);
  if (config.oauth.grant !== undefined && tokens !== null) {
    // No refresh token without a person: an expired token is replaced by the same grant.
    const provider = new VaultOAuthProvider(vault, { clientId: config.oauth.clientId, scopes: config.oauth.scopes }, '', () => undefined);
    return new OAuthSession(provider, serverUrl, { outbound, preRegistered: true }, () => machineLogin(config, vault, serverUrl(), outbound).then(() => true, () => false));
  }
  if (tokens === null || redirect === null) return undefined;
  // A refresh that fails wants a new login: the activation then ends in needs_auth.
  const provider = new VaultOAuthProvider(vault, { ...config.oauth, clientSecret: await clientSecret(config, vault) }, redirect, () => undefined);
  return new OAuthSession(provider, serverUrl, { outbound, preRegistered: config.oauth.clientId !== null });
}

/** A pre-registered client's secret, when one was given (only then is the vault asked). */
async function clientSecret(config: StoredService, vault: OAuthVault): Promise<string | null> {
  if (config.oauth?.clientId == null) return null;
  return vault.get(OAUTH_ITEMS.clientSecret);
}

/**
 * Dynamic registration as the SDK does it (the login's scope in the request), and once more
 * without a scope when the server refuses that: a stock OpenID provider accepts only its
 * own scopes there, not a resource's (RFC 7591 makes the field optional).
 */
async function register(provider: VaultOAuthProvider, discovery: OAuthDiscoveryState, scope: string | undefined, fetchFn: OutboundGuard['fetch']): Promise<void> {
  const metadata = discovery.authorizationServerMetadata;
  if ((await provider.clientInformation()) !== undefined) return;
  const urlIds = metadata?.client_id_metadata_document_supported === true;
  if (urlIds && provider.clientMetadataUrl !== undefined) return; // the SDK presents the URL as the client id (SEP-991)
  if (metadata !== undefined && metadata.registration_endpoint === undefined && urlIds) {
    throw new WispError(
      'AUTH_FAILED',
      `${quoted(metadata.issuer)} takes URL-based client ids (Client ID Metadata Documents) and offers no dynamic registration, and none is configured: ` +
        'register the service with --client-metadata-url https://… (a metadata document you host) or with --client-id',
    );
  }
  if (metadata?.registration_endpoint === undefined) return;
  const issuer = discovery.authorizationServerUrl;
  const plain = { ...provider.clientMetadata };
  delete plain.scope;
  let info;
  try {
    info = await registerClient(issuer, { metadata, clientMetadata: provider.clientMetadata, ...(scope !== undefined ? { scope } : {}), fetchFn });
  } catch (error) {
    if (scope === undefined && provider.clientMetadata.scope === undefined) throw error;
    info = await registerClient(issuer, { metadata, clientMetadata: plain, fetchFn }).catch(() => Promise.reject(error as Error));
  }
  await provider.saveClientInformation({ ...info, issuer });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WispError('TIMEOUT', 'nobody finished the login within 10 minutes')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** An SDK auth() step; what it throws (network, a refused exchange) becomes AUTH_FAILED. */
async function authStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof WispError) throw error;
    throw new WispError('AUTH_FAILED', `the OAuth flow failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The scope a login asks for: what the server asked (its 401, else its resource metadata),
 * with the user's --scopes added, and offline_access when the authorization server lists it
 * (stock OpenID providers issue a refresh token only then). Undefined when nothing names one.
 */
export function loginScope(parts: { asked: string | null; configured: string | null; serverScopes: readonly string[] | undefined }): string | undefined {
  const words = [...(parts.asked ?? '').split(' '), ...(parts.configured ?? '').split(' ')].filter((word) => word !== '');
  if (parts.serverScopes?.includes('offline_access') === true) words.push('offline_access');
  const unique = [...new Set(words)];
  return unique.length > 0 ? unique.join(' ') : undefined;
}

/** What a logout did at the authorization server (RFC 7009), before the keychain forgot the login. */
export interface Revocation {
  readonly status: 'revoked' | 'unsupported' | 'failed' | 'nothing';
  readonly message: string;
}

/**
 * Revokes the saved refresh token (else the access token) where the authorization server
 * offers revocation. Never throws: a logout goes on to forget the login locally whatever
 * the server says, and reports what happened there.
 */
export async function revokeLogin(config: StoredService, vault: OAuthVault, serverUrl: string, signal: AbortSignal, outbound?: OutboundRules): Promise<Revocation> {
  const login = await savedLogin(config, vault, () => serverUrl, outbound);
  const tokens = await login?.provider.tokens();
  const token = tokens?.refresh_token ?? tokens?.access_token;
  if (login === undefined || token === undefined) return { status: 'nothing', message: 'no token was saved' };
  let where = 'the authorization server';
  const guard = oauthGuard(serverUrl, outbound, signal);
  try {
    const discovery = await discoverChecked(serverUrl, undefined, guard, { preRegistered: config.oauth?.clientId != null });
    where = quoted(discovery.authorizationServerMetadata?.issuer ?? discovery.authorizationServerUrl);
    // The token goes only to the server that issued it (the stamp the login saved): the MCP
    // server may name another authorization server by now, which would then get the token
    // and the client's credentials, and the user would be told it was revoked.
    const stamped = (tokens as { issuer?: unknown } | undefined)?.issuer;
    if (typeof stamped !== 'string' || !issuersMatch(stamped, discovery.authorizationServerUrl)) {
      const said = typeof stamped === 'string' ? `the server now names ${where}, not ${quoted(stamped)} that issued the login` : 'the saved login does not say which authorization server issued it';
      return { status: 'failed', message: `${said}: nothing was sent, and the token stays valid there until it expires` };
    }
    const advertised = (discovery.authorizationServerMetadata as Record<string, unknown> | undefined)?.['revocation_endpoint'];
    const endpoint = typeof advertised === 'string' ? advertised : undefined;
    if (endpoint === undefined) return { status: 'unsupported', message: `${where} offers no token revocation (RFC 7009): the token stays valid there until it expires` };
    if (!secureEndpoint(endpoint)) return { status: 'failed', message: `${where} names a revocation endpoint that is not https (nor loopback): nothing was sent` };
    if (discovery.authorizationServerMetadata !== undefined) endpointOrigin(discovery.authorizationServerMetadata, 'revocation_endpoint', discovery.authorizationServerUrl, config.oauth?.clientId != null);
    const body = new URLSearchParams({ token, token_type_hint: tokens?.refresh_token !== undefined ? 'refresh_token' : 'access_token' });
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' });
    await login.provider.authenticateClient(headers, body, new URL(endpoint), discovery.authorizationServerMetadata);
    const response = await guard.fetch(endpoint, { method: 'POST', headers, body });
    await response.body?.cancel().catch(() => undefined);
    if (response.ok) return { status: 'revoked', message: `the ${tokens?.refresh_token !== undefined ? 'refresh' : 'access'} token was revoked at ${where}` };
    return { status: 'failed', message: `${where} refused the revocation (HTTP ${response.status})` };
  } catch (error) {
    return { status: 'failed', message: `the revocation at ${where} failed: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}` };
  } finally {
    await guard.close();
  }
}

/** https, or http to this machine (a loopback authorization server, as in development and tests). */
function secureEndpoint(endpoint: string): boolean {
  try {
    const url = new URL(endpoint);
    return url.protocol === 'https:' || (url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname));
  } catch {
    return false;
  }
}
