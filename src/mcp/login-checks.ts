/** The parts of login that need no SDK: the daemon uses them without loading it. */
import { WispError, isRemoteTransport } from '../core/index.js';
import { OAUTH_ITEMS, type OAuthVault } from './oauth-items.js';
import type { StoredService } from './service-store.js';

/** How long a login waits for its callback. */
export const LOGIN_TIMEOUT_MS = 600_000;

/** A login is for a remote service (streamable HTTP or legacy SSE: both send its token) that uses OAuth, as it was shown (configVersion). */
export function checkLoginTarget(config: StoredService, configVersion: number): void {
  if (!isRemoteTransport(config.transport) || config.url == null) throw new WispError('INVALID_CONFIG', `${config.name} is not a remote service`, { field: 'transport' });
  if (config.oauth?.enabled !== true) {
    throw new WispError('INVALID_CONFIG', `${config.name} does not use OAuth: register it with --oauth (or "oauth": {"enabled": true} in its config file)`, { field: 'oauth' });
  }
  if (config.configVersion !== configVersion) {
    throw new WispError('APPROVAL_STALE', `${config.name} changed since it was shown (configVersion ${config.configVersion}); show it again`, { configVersion: config.configVersion });
  }
}

/** What the user gave (a logout keeps them: they are configuration, not a login). */
const USER_ITEMS = new Set<string>([OAUTH_ITEMS.clientSecret, OAUTH_ITEMS.privateKey, OAUTH_ITEMS.identityAssertion]);

/** A service's login, gone from the vault (logout); with `everything`, its client secret too (the service deleted). */
export async function forgetLogin(config: StoredService, vault: OAuthVault, everything = false): Promise<void> {
  if (config.oauth == null) return;
  for (const name of Object.values(OAUTH_ITEMS)) {
    if (!USER_ITEMS.has(name) || everything) await vault.delete(name);
  }
}
