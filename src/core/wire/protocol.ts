/**
 * The control protocol: every method, its params and result, every event. This is the one
 * source of truth: the server validates against these schemas, the client is typed from
 * them, rpc.discover serves them as OpenRPC and docs/protocol.md is generated from them.
 * This file only gathers the parts: shapes.ts (the shared shapes), install-shapes.ts,
 * status-shapes.ts, sandbox-shapes.ts, methods.ts (service-methods.ts, session-methods.ts), events.ts and
 * openrpc.ts.
 *
 * Everything here is sent over the socket: changes must be additive.
 */
export * from './shapes.js';
export * from './install-shapes.js';
export * from './status-shapes.js';
export * from './sandbox-shapes.js';
export * from './methods.js';
export * from './pin-methods.js';
export * from './events.js';
export * from './elicitation.js';
export * from './offering-methods.js';
export * from './profile-methods.js';
export * from './openrpc.js';
