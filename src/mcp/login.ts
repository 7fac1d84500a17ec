import { randomBytes } from 'node:crypto';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { WispError, type ConnectionState } from '../core/index.js';
import { LOGIN_TIMEOUT_MS } from './login-checks.js';
import { OAUTH_ITEMS, VaultOAuthProvider, listenForCallback, probeChallenge, type OAuthVault } from './oauth.js';
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
}

/**
 * wispctl mcp login: a loopback listener armed first, the authorization URL announced, the
 * callback's state checked, the tokens saved in the vault. The caller activates afterwards.
 */
export async function login(config: StoredService, options: LoginOptions): Promise<void> {
  const { vault, signal } = options;
  const oauth = { clientId: config.oauth?.clientId ?? null, scopes: config.oauth?.scopes ?? null };
  const previous = await vault.get(OAUTH_ITEMS.redirect);
  const expectedState = randomBytes(24).toString('base64url');
  const callback = await listenForCallback(expectedState, signal, previous !== null ? Number(new URL(previous).port) : 0);
  try {
    // A client registered for another loopback port cannot use this one: register again.
    if (previous !== callback.redirectUri && oauth.clientId === null) await vault.delete(OAUTH_ITEMS.client);
    await vault.set(OAUTH_ITEMS.redirect, callback.redirectUri);
    let authorizationUrl: URL | undefined;
    const settings = { ...oauth, clientSecret: await clientSecret(config, vault) };
    const provider = new VaultOAuthProvider(vault, settings, callback.redirectUri, (url) => (authorizationUrl = url), expectedState);
    await vault.delete(OAUTH_ITEMS.tokens);
    // The scope: what the server last asked for (a step-up), else what it asks a newcomer, else the configured one.
    const serverUrl = options.serverUrl();
    const challenge = await probeChallenge(serverUrl, options.version);
    const state = options.state();
    const scope = (state.status === 'needs_auth' ? state.scope : null) ?? challenge.scope ?? oauth.scopes ?? undefined;
    const where = { serverUrl, ...(scope !== undefined ? { scope } : {}), ...(challenge.resourceMetadataUrl !== undefined ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) };
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
  }
}

/** The provider for an activation: only for an OAuth service that has logged in (tokens saved). */
export async function savedLogin(config: StoredService, vault: OAuthVault): Promise<VaultOAuthProvider | undefined> {
  if (config.oauth?.enabled !== true) return undefined;
  const [tokens, redirect] = await Promise.all([vault.get(OAUTH_ITEMS.tokens), vault.get(OAUTH_ITEMS.redirect)]);
  if (tokens === null || redirect === null) return undefined;
  // A refresh that fails wants a new login: the activation then ends in needs_auth.
  return new VaultOAuthProvider(vault, { ...config.oauth, clientSecret: await clientSecret(config, vault) }, redirect, () => undefined);
}

/** A pre-registered client's secret, when one was given (only then is the vault asked). */
async function clientSecret(config: StoredService, vault: OAuthVault): Promise<string | null> {
  if (config.oauth?.clientId == null) return null;
  return vault.get(OAUTH_ITEMS.clientSecret);
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
