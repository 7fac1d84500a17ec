import { WispError, isRemoteTransport } from '../../core/index.js';
import { OAUTH_ITEMS, checkLoginTarget, forgetLogin, login, revokeLogin } from '../../mcp/index.js';
import type { DaemonParts, Handlers } from './types.js';

/** Remote (http) services: registration with OAuth settings, login and logout. */
export function remoteHandlers(
  parts: Pick<DaemonParts, 'registry' | 'supervisor' | 'services' | 'events' | 'version'>,
): Pick<Handlers, 'services.registerRemote' | 'services.login' | 'services.logout'> {
  const { registry, supervisor, services, events } = parts;
  return {
    'services.registerRemote': async (params) => {
      const { clientSecret: secret, privateKey, identityAssertion, clientId, scopes, ...flow } = params.oauth ?? {};
      checkOAuthFlow(params.oauth);
      const config = await registry.register({
        name: params.name,
        transport: params.transport ?? 'http',
        command: '',
        url: params.url,
        timeoutMs: params.timeoutMs,
        media: params.media,
        oauth: params.oauth !== undefined ? { enabled: true, clientId: clientId ?? null, scopes: scopes ?? null, ...flow } : null,
      });
      const given = [[OAUTH_ITEMS.clientSecret, secret], [OAUTH_ITEMS.privateKey, privateKey], [OAUTH_ITEMS.identityAssertion, identityAssertion]] as const;
      if (given.some(([, value]) => value !== undefined)) {
        // Secrets first into the keychain; if it refuses, the registration is undone.
        try {
          for (const [item, value] of given) if (value !== undefined) await services.vault(config).set(item, value);
        } catch (error) {
          await registry.delete({ id: config.id });
          throw error;
        }
      }
      return { service: services.view(config) };
    },
    // wispctl mcp login: the tokens saved in the keychain, then activation.
    'services.login': async (params, ctx) => {
      const config = registry.get({ id: params.id, name: params.name });
      checkLoginTarget(config, params.configVersion);
      await login(config, {
        vault: services.vault(config),
        serverUrl: () => services.launchOf(config).url ?? config.url ?? '',
        state: () => supervisor.state(config.id),
        version: parts.version,
        announce: (authorizationUrl, redirectUri) => events.emit({ type: 'service.login', service: { id: config.id, name: config.name }, authorizationUrl, redirectUri }),
        signal: ctx.signal,
        outbound: services.outbound,
      });
      await services.activate(config, params.configVersion, ctx.signal);
      return { service: services.view(registry.get({ id: config.id })) };
    },
    // Revoked at the authorization server where it offers that (RFC 7009), then forgotten here: the answer says both.
    'services.logout': async (params, ctx) => {
      const config = registry.get(params);
      if (!isRemoteTransport(config.transport)) throw new WispError('INVALID_CONFIG', `${config.name} is not a remote service`, { field: 'transport' });
      await supervisor.stop(config.id);
      const vault = services.vault(config);
      const revocation =
        config.oauth?.enabled === true
          ? await revokeLogin(config, vault, services.launchOf(config).url ?? config.url ?? '', ctx.signal, services.outbound)
          : { status: 'nothing' as const, message: 'it does not use OAuth' };
      await forgetLogin(config, vault);
      if (config.oauth?.enabled === true) await supervisor.loggedOut(config, `logged out: log in with wispctl mcp login ${config.name}`);
      return { service: services.view(registry.get({ id: config.id })), revocation };
    },
  };
}

type OAuthParams = Parameters<Handlers['services.registerRemote']>[0]['oauth'];

/** The OAuth settings go together: what each flow needs is given, and nothing is given that no flow uses. */
function checkOAuthFlow(oauth: OAuthParams): void {
  if (oauth === undefined) return;
  const invalid = (field: string, message: string): WispError => new WispError('INVALID_CONFIG', message, { field: `oauth.${field}` });
  const preRegistered = oauth.clientId !== undefined;
  if (oauth.clientSecret !== undefined && !preRegistered) throw invalid('clientSecret', 'a client secret goes with a pre-registered client id (--client-id)');
  if (oauth.privateKey !== undefined && !preRegistered) throw invalid('privateKey', 'a private key goes with a pre-registered client id (--client-id)');
  if (oauth.grant !== undefined && !preRegistered) throw invalid('grant', `the ${oauth.grant} grant needs a pre-registered client id (--client-id)`);
  if (oauth.clientAuth === 'private_key_jwt' && oauth.privateKey === undefined) throw invalid('privateKey', 'private_key_jwt needs the client\'s private key (--private-key)');
  if (oauth.clientAuth === 'client_secret_basic' && oauth.clientSecret === undefined) throw invalid('clientSecret', 'client_secret_basic needs the client secret (--client-secret)');
  if (oauth.grant === 'client_credentials' && oauth.clientSecret === undefined && oauth.privateKey === undefined) {
    throw invalid('grant', 'the client_credentials grant needs the client secret (--client-secret) or its private key (--private-key)');
  }
  if (oauth.grant === 'cross_app' && (oauth.idpTokenEndpoint === undefined || oauth.identityAssertion === undefined)) {
    throw invalid('grant', 'cross-app access needs the identity provider\'s token endpoint (--idp-token-endpoint) and the identity assertion (--identity-assertion)');
  }
  if (oauth.grant !== 'cross_app' && (oauth.idpTokenEndpoint !== undefined || oauth.idpClientId !== undefined || oauth.identityAssertion !== undefined)) {
    throw invalid('grant', 'the identity provider settings go with --grant cross-app');
  }
}
