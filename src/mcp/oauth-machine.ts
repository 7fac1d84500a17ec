import { fetchToken, selectResourceURL, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { WispError } from '../core/index.js';
import { discoverChecked, oauthGuard, quoted } from './oauth-discovery.js';
import type { OutboundGuard, OutboundRules } from './outbound.js';
import { OAUTH_ITEMS, type OAuthVault } from './oauth-items.js';
import type { StoredService } from './service-store.js';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** A machine-to-machine login's settings, its secrets read from the keychain for this use only. */
interface MachineClient {
  readonly grant: 'client_credentials' | 'cross_app';
  readonly clientId: string;
  readonly clientSecret: string | null;
  readonly privateKey: string | null;
  readonly signingAlg: string;
  readonly scope: string | undefined;
  readonly idp: { readonly tokenEndpoint: string; readonly clientId: string | null; readonly assertion: string } | null;
}

async function machineClient(config: StoredService, vault: OAuthVault): Promise<MachineClient> {
  const oauth = config.oauth;
  if (oauth?.grant === undefined || oauth.clientId === null) throw new WispError('INVALID_CONFIG', `${config.name} has no machine-to-machine OAuth settings`, { field: 'oauth.grant' });
  const [clientSecret, privateKey, assertion] = await Promise.all([vault.get(OAUTH_ITEMS.clientSecret), vault.get(OAUTH_ITEMS.privateKey), vault.get(OAUTH_ITEMS.identityAssertion)]);
  const missing = (what: string): WispError => new WispError('NEEDS_AUTH', `${config.name}: the ${what} is not in the keychain: register the service again with it`);
  if (oauth.clientAuth === 'private_key_jwt' && privateKey === null) throw missing('client\'s private key');
  if (oauth.grant === 'cross_app' && (assertion === null || oauth.idpTokenEndpoint === undefined)) throw missing('identity assertion');
  return {
    grant: oauth.grant,
    clientId: oauth.clientId,
    clientSecret,
    privateKey: oauth.clientAuth === 'client_secret_basic' ? null : privateKey,
    signingAlg: oauth.signingAlg ?? 'ES256',
    scope: oauth.scopes ?? undefined,
    idp: oauth.grant === 'cross_app' && assertion !== null && oauth.idpTokenEndpoint !== undefined ? { tokenEndpoint: oauth.idpTokenEndpoint, clientId: oauth.idpClientId ?? null, assertion } : null,
  };
}

/**
 * Client credentials (the client's secret with HTTP Basic, or a JWT signed with its key,
 * RFC 7523 §2.2), or cross-app access: the identity assertion exchanged at the identity
 * provider for an ID-JAG (RFC 8693), presented to the authorization server as a JWT bearer
 * grant. No person, no browser; the tokens go to the keychain like a login's.
 */
export async function machineLogin(config: StoredService, vault: OAuthVault, serverUrl: string, outbound: OutboundRules | undefined, signal?: AbortSignal): Promise<void> {
  const client = await machineClient(config, vault);
  const guard = oauthGuard(serverUrl, outbound, signal);
  // The identity provider is the user's own setting: its address may be as near as its URL.
  const idpGuard = client.idp !== null ? oauthGuard(client.idp.tokenEndpoint, outbound, signal) : undefined;
  try {
    const discovery = await discoverChecked(serverUrl, undefined, guard, { preRegistered: true });
    const issuer = discovery.authorizationServerUrl;
    const holder: { tokens?: OAuthTokens } = {};
    const provider = machineProvider(client, holder);
    const resource = await selectResourceURL(serverUrl, provider, discovery.resourceMetadata);
    if (client.idp !== null && idpGuard !== undefined) {
      const assertion = await exchangeAtIdp(client.idp, issuer, resource?.href ?? serverUrl, idpGuard.fetch);
      provider.prepareTokenRequest = (scope) => new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope !== undefined ? { scope } : {}) });
    }
    let tokens: OAuthTokens;
    try {
      tokens = await fetchToken(provider, issuer, { ...optionalMetadata(discovery), ...(resource !== undefined ? { resource } : {}), fetchFn: guard.fetch });
    } catch (error) {
      if (error instanceof WispError) throw error;
      throw new WispError('AUTH_FAILED', `the ${client.grant === 'cross_app' ? 'JWT bearer' : 'client credentials'} grant at ${quoted(issuer)} failed: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
    }
    await vault.set(OAUTH_ITEMS.tokens, JSON.stringify({ ...tokens, issuer }));
  } finally {
    await Promise.all([guard.close(), idpGuard?.close()]);
  }
}

function optionalMetadata(discovery: OAuthDiscoveryState): { metadata?: NonNullable<OAuthDiscoveryState['authorizationServerMetadata']> } {
  return discovery.authorizationServerMetadata !== undefined ? { metadata: discovery.authorizationServerMetadata } : {};
}

/** RFC 8693 at the identity provider: the identity assertion for an ID-JAG meant for `audience` and `resource`. */
async function exchangeAtIdp(idp: NonNullable<MachineClient['idp']>, audience: string, resource: string, fetchFn: OutboundGuard['fetch']): Promise<string> {
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    subject_token: idp.assertion,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
    audience,
    resource,
    ...(idp.clientId !== null ? { client_id: idp.clientId } : {}),
  });
  const response = await fetchFn(idp.tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body });
  const text = (await response.text()).slice(0, 65_536);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  const token = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>)['access_token'] : undefined;
  if (!response.ok || typeof token !== 'string') {
    throw new WispError('AUTH_FAILED', `the identity provider ${quoted(idp.tokenEndpoint)} refused the token exchange (HTTP ${response.status}): ${quoted(text)}`);
  }
  return token;
}

/** The SDK's provider interface for a grant without a browser: no redirect, client information from the settings. */
function machineProvider(client: MachineClient, holder: { tokens?: OAuthTokens }): OAuthClientProvider {
  const information: OAuthClientInformationMixed = { client_id: client.clientId, ...(client.clientSecret !== null && client.privateKey === null ? { client_secret: client.clientSecret } : {}) };
  const metadata: OAuthClientMetadata = {
    client_name: 'Wisp Host',
    redirect_uris: [],
    grant_types: [client.grant === 'cross_app' ? JWT_BEARER : 'client_credentials'],
    token_endpoint_auth_method: client.privateKey !== null ? 'private_key_jwt' : 'client_secret_basic',
    ...(client.scope !== undefined ? { scope: client.scope } : {}),
  };
  return {
    redirectUrl: undefined,
    clientMetadata: metadata,
    clientInformation: () => information,
    tokens: () => holder.tokens,
    saveTokens: (tokens) => void (holder.tokens = tokens),
    redirectToAuthorization: () => {
      throw new WispError('AUTH_FAILED', 'a machine-to-machine login has no browser step');
    },
    saveCodeVerifier: () => undefined,
    codeVerifier: () => '',
    prepareTokenRequest: (scope) => new URLSearchParams({ grant_type: 'client_credentials', ...(scope !== undefined ? { scope } : {}) }),
    ...(client.privateKey !== null
      ? { addClientAuthentication: createPrivateKeyJwtAuth({ issuer: client.clientId, subject: client.clientId, privateKey: client.privateKey, alg: client.signingAlg }) }
      : {}),
  };
}
