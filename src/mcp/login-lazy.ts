import type { LoginOptions } from './login.js';
import type { VaultOAuthProvider, OAuthVault } from './oauth.js';
import type { StoredService } from './service-store.js';

export type { LoginOptions } from './login.js';

/*
 * Login and a saved login's provider need the MCP SDK's OAuth client, loaded here on first
 * use: the daemon starts, and most of its runs end, without a remote service logging in.
 */

/** wispctl mcp login (login.ts). */
export async function login(config: StoredService, options: LoginOptions): Promise<void> {
  return (await import('./login.js')).login(config, options);
}

/** The provider for an activation (login.ts). */
export async function savedLogin(config: StoredService, vault: OAuthVault): Promise<VaultOAuthProvider | undefined> {
  return (await import('./login.js')).savedLogin(config, vault);
}
