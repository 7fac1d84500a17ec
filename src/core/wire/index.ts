/**
 * The wire and persisted schemas (TypeBox), the method and event tables, and what is
 * generated from them (OpenRPC, docs). Loading this door builds every schema: the daemon
 * and the socket server do; wispctl never does (it takes the types from core/index.ts).
 */
export * from './protocol.js';
export { renderProtocolMarkdown, renderErrorsMarkdown } from './docs.js';
