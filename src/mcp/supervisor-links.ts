import type { ConnectionEvent } from '../core/index.js';
import type { ElicitSink } from './elicit-handler.js';
import type { Elicitations } from './elicitations.js';
import { AuthRequired, type Failure } from './failure.js';
import type { StoredService } from './service-store.js';
import type { ProcessTracker } from './stdio-transport.js';

/** Small pieces the supervisor hands each connection: where its process and its elicitations are reported, and how a failure moves its state. */

/** Where a service's server process group is reported (crash recovery records). */
export function trackerFor(
  processes: { started(serviceId: string, name: string, pid: number): void; ended(pid: number): void } | undefined,
  config: StoredService,
): ProcessTracker | undefined {
  if (processes === undefined) return undefined;
  return { started: (pid) => processes.started(config.id, config.name, pid), ended: (pid) => processes.ended(pid) };
}

/** A service's elicitation requests, to the daemon's Elicitations under the service's current name (read at each request: a rename moves it). */
export function elicitSink(elicitations: Elicitations | undefined, service: { readonly id: string; readonly name: string }): ElicitSink | undefined {
  if (elicitations === undefined) return undefined;
  return { ask: (request, signal) => elicitations.ask({ id: service.id, name: service.name }, request, signal) };
}

/** A failure, or (a server that wants a login) the needs_auth state with where to log in. */
export function failureEvent(failure: Failure): ConnectionEvent {
  if (failure instanceof AuthRequired) return { type: 'needs_auth', authorizationServer: failure.authorizationServer, scope: failure.scope, message: failure.message };
  return { type: 'failed', code: failure.code, message: failure.message };
}
