/**
 * The version of mcp-servers.json's shape: its own module, so that the schema
 * (service-store-schema.ts, read when the checks are generated) and the store (which runs
 * without the schema) share it without importing each other.
 */
export const SCHEMA_VERSION = 1;
