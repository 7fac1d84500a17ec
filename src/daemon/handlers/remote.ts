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
      const secret = params.oauth?.clientSecret;
      if (secret !== undefined && params.oauth?.clientId === undefined) {
        throw new WispError('INVALID_CONFIG', 'a client secret goes with a pre-registered client id (--client-id)', { field: 'oauth.clientSecret' });
      }
      const config = await registry.register({
        name: params.name,
        transport: params.transport ?? 'http',
        command: '',
        url: params.url,
        timeoutMs: params.timeoutMs,
        oauth: params.oauth !== undefined ? { enabled: true, clientId: params.oauth.clientId ?? null, scopes: params.oauth.scopes ?? null } : null,
      });
      if (secret !== undefined) {
        // Secret first into the keychain; if it refuses, the registration is undone.
        try {
          await services.vault(config).set(OAUTH_ITEMS.clientSecret, secret);
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
          ? await revokeLogin(config, vault, services.launchOf(config).url ?? config.url ?? '', ctx.signal)
          : { status: 'nothing' as const, message: 'it does not use OAuth' };
      await forgetLogin(config, vault);
      if (config.oauth?.enabled === true) await supervisor.loggedOut(config, `logged out: log in with wispctl mcp login ${config.name}`);
      return { service: services.view(registry.get({ id: config.id })), revocation };
    },
  };
}
