/** The names a service's OAuth state is kept under: no SDK here, the daemon uses them at start. */

/** Where a service's OAuth state lives: the OS keychain, one entry per item, never a file. */
export interface OAuthVault {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

export const OAUTH_ITEMS = {
  tokens: 'oauth:tokens',
  client: 'oauth:client',
  verifier: 'oauth:verifier',
  redirect: 'oauth:redirect',
  /** A pre-registered client's secret (confidential clients): set by the user, never shown. */
  clientSecret: 'oauth:client-secret',
  /** private_key_jwt: the client's private key (PKCS#8 PEM): set by the user, never shown. */
  privateKey: 'oauth:private-key',
  /** cross_app: the identity assertion exchanged at the IdP: set by the user, never shown. */
  identityAssertion: 'oauth:identity-assertion',
} as const;
