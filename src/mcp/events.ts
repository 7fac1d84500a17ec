import type { ConnectionState, ErrorCode, WispEvent } from '../core/index.js';
import type { StoredService } from './service-store.js';

type ServiceRef = { readonly id: string; readonly name: string };
/** A call as it is named in events (the same reference clients read). */
export type CallRef = Extract<WispEvent, { type: 'tool.call.started' }>['call'];
type FailedCallRef = Extract<WispEvent, { type: 'tool.call.failed' }>['call'];

/**
 * What the MCP area announces: the registry's changes, the supervisor's connections and tool
 * lists, the calls. Areas only publish these; the daemon's bridge (daemon/bridge.ts) is the
 * one place that turns them into wire events and reacts to them (approval invalidation).
 */
export type McpEvent =
  | { readonly kind: 'service.registered' | 'service.updated'; readonly service: StoredService }
  /** Its live network grants changed: not an edit (no stop, no configVersion bump). */
  | { readonly kind: 'service.granted'; readonly service: StoredService }
  | { readonly kind: 'service.deleted'; readonly service: ServiceRef }
  | { readonly kind: 'connection.changed'; readonly service: ServiceRef; readonly state: ConnectionState }
  | { readonly kind: 'tools.discovered'; readonly service: ServiceRef; readonly toolListVersion: number; readonly toolCount: number }
  | { readonly kind: 'tools.held'; readonly service: ServiceRef; readonly toolListVersion: number; readonly added: string[]; readonly changed: string[] }
  | { readonly kind: 'tools.accepted'; readonly service: ServiceRef; readonly toolListVersion: number; readonly accepted: string[] }
  | { readonly kind: 'call.started'; readonly call: CallRef }
  | { readonly kind: 'call.progress'; readonly call: CallRef; readonly progress: number; readonly total: number | null; readonly message: string | null }
  | { readonly kind: 'call.finished'; readonly call: CallRef; readonly durationMs: number; readonly waitedMs: number; readonly truncated: boolean }
  | { readonly kind: 'call.failed'; readonly call: FailedCallRef; readonly code: ErrorCode; readonly message: string; readonly durationMs: number; readonly waitedMs: number }
  | { readonly kind: 'network.refused'; readonly refusal: NetworkRefusal }
  | ServerNotice;

/** What a server said of its own accord (server-notices.ts): a log message, a resource changed, a list changed. */
export type ServerNotice =
  | ({ readonly kind: 'server.log' } & Omit<Extract<WispEvent, { type: 'service.log' }>, 'type' | 'seq' | 'at'>)
  | { readonly kind: 'resource.updated'; readonly service: ServiceRef; readonly uri: string }
  | { readonly kind: 'offerings.changed'; readonly service: ServiceRef; readonly changed: 'resources' | 'prompts' };

/** A sandboxed server's connection its egress proxy refused (the wire event network.refused). */
export type NetworkRefusal = Omit<Extract<WispEvent, { type: 'network.refused' }>, 'type' | 'seq' | 'at'>;

/** The registry's part of it: a configuration registered, edited or deleted. */
export type RegistryChange = Extract<McpEvent, { kind: `service.${string}` }>;
