import type { ErrorCode } from './errors.js';
import type { ConnectionState } from './wire/shapes.js';
import { assertNever } from './assert-never.js';

export type { ConnectionState };

/** Everything that can happen to a connection. Each maps to at most one next state. */
export type ConnectionEvent =
  | { readonly type: 'activate'; readonly generation: number }
  | { readonly type: 'spawned'; readonly pid: number | null }
  | { readonly type: 'initialized' }
  | {
      readonly type: 'discovered';
      readonly toolCount: number;
      readonly toolListVersion: number;
      readonly server: { readonly name: string; readonly version: string; readonly protocolVersion: string };
    }
  | { readonly type: 'failed'; readonly code: ErrorCode; readonly message: string }
  | { readonly type: 'needs_auth'; readonly authorizationServer: string | null; readonly scope: string | null; readonly message: string }
  | { readonly type: 'stop' }
  | { readonly type: 'stopped' };

export class InvalidTransition extends Error {
  constructor(
    readonly state: ConnectionState,
    readonly event: ConnectionEvent,
  ) {
    super(`connection cannot go from ${state.status} on ${event.type}`);
  }
}

/**
 * The one transition function of the connection state machine:
 * disabled -> activating(spawning -> initializing -> discovering) -> active; any of those
 * may end in failed (or needs_auth, for a remote server that wants a login);
 * activating/active -> stopping -> disabled; failed or needs_auth -> stopping or a new
 * activation. Anything else is a bug and throws.
 */
export function transition(state: ConnectionState, event: ConnectionEvent, at: string): ConnectionState {
  switch (event.type) {
    case 'activate':
      if (state.status === 'disabled' || state.status === 'failed' || state.status === 'needs_auth') {
        return { status: 'activating', phase: 'spawning', generation: event.generation, pid: null, since: at };
      }
      break;
    case 'spawned':
      if (state.status === 'activating' && state.phase === 'spawning') {
        return { ...state, phase: 'initializing', pid: event.pid, since: at };
      }
      break;
    case 'initialized':
      if (state.status === 'activating' && state.phase === 'initializing') return { ...state, phase: 'discovering', since: at };
      break;
    case 'discovered':
      if (state.status === 'active') {
        return { ...state, toolCount: event.toolCount, toolListVersion: event.toolListVersion, server: { ...event.server } };
      }
      if (state.status === 'activating' && state.phase === 'discovering') {
        const { generation, pid } = state;
        return { status: 'active', generation, pid, toolCount: event.toolCount, toolListVersion: event.toolListVersion, server: { ...event.server }, since: at };
      }
      break;
    case 'failed':
      if (state.status === 'activating' || state.status === 'active') {
        return { status: 'failed', generation: state.generation, code: event.code, message: event.message, at };
      }
      break;
    case 'needs_auth':
      if (state.status === 'activating' || state.status === 'active') {
        return { status: 'needs_auth', generation: state.generation, authorizationServer: event.authorizationServer, scope: event.scope, message: event.message, at };
      }
      // A logout: the stopped service now waits for a login, not merely an activation.
      if (state.status === 'disabled') return { status: 'needs_auth', generation: 0, authorizationServer: event.authorizationServer, scope: event.scope, message: event.message, at };
      break;
    case 'stop':
      if (state.status === 'activating' || state.status === 'active') {
        return { status: 'stopping', generation: state.generation, pid: state.pid, since: at };
      }
      if (state.status === 'failed' || state.status === 'needs_auth') return { status: 'stopping', generation: state.generation, pid: null, since: at };
      break;
    case 'stopped':
      if (state.status === 'stopping') return { status: 'disabled', since: at };
      break;
    default:
      return assertNever(event);
  }
  throw new InvalidTransition(state, event);
}
