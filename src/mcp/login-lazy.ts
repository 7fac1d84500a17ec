import type { LoginOptions, Revocation } from './login.js';
import type { OAuthVault } from './oauth.js';
import type { BearerSource } from './http-transport.js';
import type { StoredService } from './service-store.js';
import type { OutboundRules } from './outbound.js';

export type { LoginOptions, Revocation } from './login.js';

/*
 * Login and a saved login's provider need the MCP SDK's OAuth client, loaded here on first
 * use: the daemon starts, and most of its runs end, without a remote service logging in.
 */

/** wispctl mcp login (login.ts). */
export async function login(config: StoredService, options: LoginOptions): Promise<void> {
  return (await import('./login.js')).login(config, options);
}

/** wispctl mcp logout, at the authorization server (login.ts). */
export async function revokeLogin(config: StoredService, vault: OAuthVault, serverUrl: string, signal: AbortSignal, outbound?: OutboundRules): Promise<Revocation> {
  return (await import('./login.js')).revokeLogin(config, vault, serverUrl, signal, outbound);
}

/** The saved login for an activation (login.ts). */
export async function savedLogin(config: StoredService, vault: OAuthVault, serverUrl: () => string, outbound?: OutboundRules): Promise<BearerSource | undefined> {
  return (await import('./login.js')).savedLogin(config, vault, serverUrl, outbound);
}
