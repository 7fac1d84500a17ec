/** The version of the control protocol a daemon speaks (rpc.discover, daemon.status). */
export const PROTOCOL_VERSION = '1';

/** Service names: 1-64 characters, letters, digits, '.', '_' and '-', starting with a letter or digit. */
export const SERVICE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * Profile names (wispctl mcp profile): 1-32 characters, letters, digits, '_' and '-',
 * starting with a letter or digit. No '.': the name goes into an MCP client's entry name
 * (`wisp-NAME`) as it is.
 */
export const PROFILE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$';

/** How a service is reached: a local program (stdio), or a remote server over streamable HTTP or the legacy HTTP+SSE transport. */
export type ServiceTransport = 'stdio' | 'http' | 'sse';

/** Whether a service is a remote server (streamable HTTP or legacy SSE): headers, URL, OAuth; no process of ours. */
export function isRemoteTransport(transport: ServiceTransport | undefined): transport is 'http' | 'sse' {
  return transport === 'http' || transport === 'sse';
}

/** Environment variable names: letters, digits and '_', not starting with a digit. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/** A connection's name (client.identify): letters, digits and . _ : @ + -, starting with a letter or digit; no spaces. */
export const CLIENT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:@+-]*$';

/**
 * A gateway's id (client.identify): what `wispctl mcp serve` makes at its start, 22-64
 * characters of base64url (its 128 random bits are 22). Never sent back by the daemon.
 */
export const GATEWAY_ID_PATTERN = '^[A-Za-z0-9_-]{22,64}$';

/**
 * A sandbox's network grant: a host name (`api.example.com`, `*.example.com` for its
 * subdomains) or an address (`10.0.0.5`, `[::1]`), with an optional port. Lower case: a
 * grant is compared as written, before any name is resolved.
 */
export const NET_GRANT_PATTERN = '^((\\*\\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|\\[[0-9a-f:.]{2,45}\\])(:[0-9]{1,5})?$';

/** A sandbox's file grant: an absolute path, without NUL or line breaks. */
export const GRANT_PATH_PATTERN = '^/[^\\u0000\\r\\n]*$';

/**
 * Every pattern in our own schemas, said in words: an INVALID_PARAMS message says what is
 * allowed, never the regular expression (src/control/rpc-request.ts; a unit test keeps every
 * pattern of the methods' params here).
 */
export const PATTERN_WORDS: Readonly<Record<string, string>> = {
  [SERVICE_NAME_PATTERN]: 'must be 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit',
  [PROFILE_NAME_PATTERN]: 'must be 1-32 characters from A-Z a-z 0-9 _ -, starting with a letter or digit',
  [ENV_NAME_PATTERN]: 'must be letters, digits and _, not starting with a digit',
  '^[^\\u0000]*$': 'must not contain a NUL character',
  '^[^\\u0000\\r\\n]*$': 'must not contain NUL or a line break',
  '^https?://': 'must start with http:// or https://',
  '^https?://[^\\s]+$': 'must be an http:// or https:// URL without spaces',
  '^https://[^\\s]+$': 'must be an https:// URL without spaces',
  '^/': 'must be an absolute path (starting with /)',
  '^[0-9a-f]{32}$': 'must be a plan digest: 32 characters 0-9 a-f',
  '^[0-9a-f]{64}$': 'must be a digest as tools.review gave it: 64 characters 0-9 a-f',
  "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$": "must be an HTTP header name: letters, digits and !#$%&'*+.^_`|~-",
  '^(0|[1-9][0-9]{0,5})$': 'must be a cursor given by the previous page (a number)',
  '^[0-9]{1,15}$': 'must be a cursor given by the previous page (a number)',
  [CLIENT_NAME_PATTERN]: 'must be letters, digits and . _ : @ + -, starting with a letter or digit (no spaces)',
  [GATEWAY_ID_PATTERN]: 'must be 22-64 characters from A-Z a-z 0-9 _ - (a gateway id as wispctl mcp serve makes it)',
  [NET_GRANT_PATTERN]: 'must be a host name (or *.domain) or an address ([::1] for IPv6), in lower case, with an optional :port',
  [GRANT_PATH_PATTERN]: 'must be an absolute path (starting with /) without NUL or line breaks',
};
