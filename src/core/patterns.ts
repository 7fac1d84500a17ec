/** The version of the control protocol a daemon speaks (rpc.discover, daemon.status). */
export const PROTOCOL_VERSION = '1';

/** Service names: 1-64 characters, letters, digits, '.', '_' and '-', starting with a letter or digit. */
export const SERVICE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/** Environment variable names: letters, digits and '_', not starting with a digit. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
