import { refreshAuthorization, selectResourceURL, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { BearerSource } from './http-transport.js';
import { discoverChecked, issuersMatch, oauthGuard } from './oauth-discovery.js';
import type { OutboundRules } from './outbound.js';
import type { VaultOAuthProvider } from './oauth.js';

/**
 * A saved login in use by one activation: hands the access token to the transport and
 * renews it on a 401. Renewals are shared: every request that got a 401 while one runs
 * waits for it, and a request that was refused a token already replaced just retries. A
 * provider that rotates refresh tokens (each one good once) sees each used once; two
 * refreshes with one token would read as a replay and revoke the whole grant.
 */
export class OAuthSession implements BearerSource {
  private renewing: Promise<boolean> | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private why: string | undefined;

  constructor(
    readonly provider: VaultOAuthProvider,
    private readonly serverUrl: () => string,
    /** The address rule's test seam (none in production), and whether the client is the user's own (--client-id). */
    private readonly use: { readonly outbound?: OutboundRules | undefined; readonly preRegistered: boolean },
    /** Machine-to-machine logins have no refresh token: they ask for a new token the same way. */
    private readonly fetchNew?: () => Promise<boolean>,
  ) {}

  /** Why the last renewal failed, for the message that asks for a login. */
  get problem(): string | undefined {
    return this.why;
  }

  async accessToken(): Promise<string | undefined> {
    return (await this.provider.tokens())?.access_token;
  }

  renew(sent: string): Promise<boolean> {
    this.renewing ??= this.renewOnce(sent).finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renewOnce(sent: string): Promise<boolean> {
    const tokens = await this.provider.tokens();
    if (tokens?.access_token !== undefined && tokens.access_token !== sent) return true;
    if (this.fetchNew !== undefined) return this.fetchNew();
    const refreshToken = tokens?.refresh_token;
    if (refreshToken === undefined) {
      this.why = 'the access token expired and the authorization server gave no refresh token';
      return false;
    }
    const serverUrl = this.serverUrl();
    const guard = oauthGuard(serverUrl, this.use.outbound);
    try {
      const discovery = (this.discovery ??= await discoverChecked(serverUrl, undefined, guard, this.use));
      const issuer = discovery.authorizationServerUrl;
      // Never post a refresh token to a server other than the one that issued it (the SDK's stamp).
      if (typeof tokens?.issuer === 'string' && !issuersMatch(tokens.issuer, issuer)) {
        this.why = 'the server now names another authorization server than the one that issued the login';
        return false;
      }
      const selected = await selectResourceURL(serverUrl, this.provider, discovery.resourceMetadata);
      const fresh = await refreshAuthorization(issuer, {
        metadata: discovery.authorizationServerMetadata,
        clientInformation: (await this.provider.clientInformation()) ?? { client_id: '' },
        refreshToken,
        ...(selected !== undefined ? { resource: selected } : {}),
        fetchFn: guard.fetch,
      });
      await this.provider.saveTokens({ ...fresh, issuer });
      this.why = undefined;
      return true;
    } catch (error) {
      this.why = `the token refresh was refused: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`;
      return false;
    } finally {
      await guard.close();
    }
  }
}
