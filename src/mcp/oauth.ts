import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { extractWWWAuthenticateParams, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WispError } from '../core/index.js';

export { OAUTH_ITEMS, type OAuthVault } from './oauth-items.js';
import { OAUTH_ITEMS, type OAuthVault } from './oauth-items.js';

export interface OAuthSettings {
  readonly clientId: string | null;
  readonly scopes: string | null;
  /** With a pre-registered client id: its secret, read from the vault for this use only. */
  readonly clientSecret?: string | null;
  /** A Client ID Metadata Document's https URL: the client id where the authorization server takes one (SEP-991). */
  readonly clientMetadataUrl?: string | null;
}

/**
 * The SDK's OAuthClientProvider, backed by the vault. Tokens and client information are
 * kept verbatim (the SDK stamps them with their issuer and checks it on the way back).
 * `onRedirect` hears the authorization URL when the SDK wants a human to log in.
 */
export class VaultOAuthProvider implements OAuthClientProvider {
  /** The discovery this login checked (issuer, RFC 8414): the SDK uses it instead of asking again. */
  discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly vault: OAuthVault,
    private readonly settings: OAuthSettings,
    private readonly redirect: string,
    private readonly onRedirect: (authorizationUrl: URL) => void,
    private readonly stateValue?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings.clientMetadataUrl ?? undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Wisp Host',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: (this.settings.clientSecret ?? null) !== null ? 'client_secret_basic' : 'none',
      ...(this.settings.scopes !== null ? { scope: this.settings.scopes } : {}),
    };
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  state(): string {
    return this.stateValue ?? randomBytes(16).toString('hex');
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    if (this.settings.clientId !== null) {
      const secret = this.settings.clientSecret ?? null;
      return { client_id: this.settings.clientId, ...(secret !== null ? { client_secret: secret } : {}) };
    }
    return parse(await this.vault.get(OAUTH_ITEMS.client)) as OAuthClientInformationMixed | undefined;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    if (this.settings.clientId !== null) return;
    await this.vault.set(OAUTH_ITEMS.client, JSON.stringify(info));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return parse(await this.vault.get(OAUTH_ITEMS.tokens)) as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.vault.set(OAUTH_ITEMS.tokens, JSON.stringify(tokens));
  }

  /** Client authentication for a request of ours (a revocation), the way the token endpoint gets it (RFC 6749 §2.3.1). */
  async authenticateClient(headers: Headers, params: URLSearchParams, _url: URL, _metadata: AuthorizationServerMetadata | undefined): Promise<void> {
    const info = await this.clientInformation();
    if (info === undefined) return;
    const secret = info.client_secret;
    const method = 'token_endpoint_auth_method' in info ? info.token_endpoint_auth_method : undefined;
    if (secret !== undefined && method !== 'client_secret_post') {
      headers.set('authorization', `Basic ${Buffer.from(`${encodeURIComponent(info.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`);
      return;
    }
    params.set('client_id', info.client_id);
    if (secret !== undefined) params.set('client_secret', secret);
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.onRedirect(authorizationUrl);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.vault.set(OAUTH_ITEMS.verifier, codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const verifier = await this.vault.get(OAUTH_ITEMS.verifier);
    if (verifier === null) throw new WispError('NEEDS_AUTH', 'no PKCE verifier is saved for this login: start it again');
    return verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'all' || scope === 'tokens') await this.vault.delete(OAUTH_ITEMS.tokens);
    if (scope === 'all' || scope === 'client') await this.vault.delete(OAUTH_ITEMS.client);
    if (scope === 'all' || scope === 'verifier') await this.vault.delete(OAUTH_ITEMS.verifier);
  }
}

/** Saved JSON, verbatim as the SDK gave it (the SDK checks its own fields, e.g. the issuer stamp). */
function parse(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface LoopbackCallback {
  readonly redirectUri: string;
  /** Resolves with the authorization code once a callback with the expected state (and issuer) arrives. */
  readonly code: Promise<string>;
  /** How the callback's `iss` is judged (RFC 9207), once the authorization server is known: an error refuses it. */
  checkIssuer(check: (iss: string | null) => WispError | undefined): void;
  close(): Promise<void>;
}

/**
 * The redirect target of a login: a listener on 127.0.0.1, armed before the user is sent
 * to the authorization server. The first callback decides: a wrong `state` (the SDK does
 * not check it) or an error from the server fails the login; nothing else is accepted.
 */
export async function listenForCallback(expectedState: string, signal: AbortSignal, preferredPort = 0): Promise<LoopbackCallback> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => undefined);
  let done = false;
  let issuerError: (iss: string | null) => WispError | undefined = () => undefined;
  const finish = (outcome: { code: string } | { error: WispError }): void => {
    if (done) return;
    done = true;
    if ('code' in outcome) settle.resolve(outcome.code);
    else settle.reject(outcome.error);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || done) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const state = url.searchParams.get('state');
    const error = url.searchParams.get('error');
    const received = url.searchParams.get('code');
    const wrongIssuer = state === expectedState ? issuerError(url.searchParams.get('iss')) : undefined;
    if (state !== expectedState) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This login link does not match the login that was started (state mismatch). Start it again.\n');
      finish({ error: new WispError('AUTH_FAILED', 'the authorization callback carried a state that does not match this login: refused') });
    } else if (wrongIssuer !== undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This login answer comes from another authorization server than the one the login went to (issuer mismatch). Start it again.\n');
      finish({ error: wrongIssuer });
    } else if (error !== null || received === null) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('The authorization server did not grant access.\n');
      finish({ error: new WispError('AUTH_FAILED', `the authorization server answered ${error ?? 'without a code'}${url.searchParams.get('error_description') !== null ? `: ${url.searchParams.get('error_description') ?? ''}` : ''}`) });
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('Logged in. You can close this page and go back to the terminal.\n');
      finish({ code: received });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (preferredPort !== 0 && error.code === 'EADDRINUSE') server.listen(0, '127.0.0.1', resolve);
      else reject(error);
    });
    server.listen(preferredPort, '127.0.0.1', resolve);
  });
  const onAbort = (): void => finish({ error: new WispError('CANCELLED', 'the login was cancelled') });
  signal.addEventListener('abort', onAbort, { once: true });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    code,
    checkIssuer: (check) => (issuerError = check),
    close: async () => {
      signal.removeEventListener('abort', onAbort);
      finish({ error: new WispError('CANCELLED', 'the login ended') });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Asks the server what it wants before a login: an unauthenticated initialize, whose 401
 * carries WWW-Authenticate with the resource metadata URL and the scope (RFC 9728, SEP-835).
 */
export async function probeChallenge(url: string, version: string, guard: { readonly fetch: FetchLike }): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const response = await guard.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'wispd', version } } }),
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) return extractWWWAuthenticateParams(response);
  } catch {
    // no challenge to learn from: discovery falls back to the well-known locations
  }
  return {};
}
