import { PROTOCOL_VERSION, WispError, servicesSummary } from '../../core/index.js';
import type { openRpcDocument } from '../../core/wire/index.js';
import { clientId } from '../views.js';
import type { DaemonControl, DaemonParts, Handlers } from './types.js';

type Deps = Pick<DaemonParts, 'version' | 'paths' | 'now' | 'events' | 'store' | 'registry' | 'supervisor' | 'services' | 'sourceSync'>;

/** daemon.status, daemon.shutdown, rpc.discover, and what a connection says about itself: client.identify, rpc.cancel. */
export function daemonHandlers(parts: Deps, control: DaemonControl): Pick<Handlers, 'daemon.status' | 'daemon.shutdown' | 'rpc.discover' | 'client.identify' | 'rpc.cancel'> {
  const { events, registry, supervisor, sourceSync } = parts;
  /** Built once: the document is a few hundred KB and never changes while we run. */
  // The promise is kept, not the document: requests that arrive before the first is built share it.
  let discovery: Promise<ReturnType<typeof openRpcDocument>> | undefined;
  return {
    'daemon.status': (_params, ctx) => ({
      version: parts.version,
      protocolVersion: PROTOCOL_VERSION,
      pid: process.pid,
      runId: events.runId,
      startedAt: control.startedAt.toISOString(),
      uptimeMs: Math.max(0, Math.round(parts.now().getTime() - control.startedAt.getTime())),
      nodeVersion: process.version,
      paths: { ...parts.paths, registryFile: parts.store.file },
      counts: {
        services: registry.count,
        enabledServices: supervisor.runningCount,
        activeTools: supervisor.activeToolCount,
        clients: control.connections().clientCount,
        subscribers: control.connections().subscriberCount,
      },
      // The status panel's line, computed as wispctl mcp list and the web panel compute it from services.list.
      services: servicesSummary(registry.list().map((config) => parts.services.view(config))),
      load: control.connections().load,
      lastSeq: events.lastSeq,
      you: { clientId: clientId(ctx.connection) },
      registryLoadError: control.loadProblem(),
      sourceProblems: (sourceSync.report?.problems ?? []).flatMap(({ file, message, code }) => (code !== undefined ? [{ file, message, code }] : [])),
    }),
    'daemon.shutdown': (_params, ctx) => {
      ctx.afterResponse(() => control.stop('daemon.shutdown requested'));
      return { stopping: true as const };
    },
    // The wire schemas (TypeBox) are loaded when a client first asks for them, not at start.
    // Once only: every approval, event and audit record of this connection keeps one name.
    // A gateway id is kept by the socket server only (admission.ts), never echoed: knowing one is all it takes to count against that gateway.
    'client.identify': (params, ctx) => {
      const { name, gateway } = params;
      if (name !== undefined && ctx.connection.clientName !== null) throw new WispError('INVALID_PARAMS', `this connection is already named ${ctx.connection.clientName}`);
      if (gateway !== undefined) ctx.connection.joinGateway(gateway);
      if (name !== undefined) ctx.connection.clientName = name;
      return { clientId: clientId(ctx.connection) };
    },
    'rpc.cancel': (params, ctx) => ({
      cancelled: ctx.connection.cancelRequest(params.id, new WispError('CANCELLED', params.reason ?? 'the client cancelled the request')),
    }),
    'rpc.discover': () => (discovery ??= import('../../core/wire/index.js').then((wire) => wire.openRpcDocument(parts.version))),
  };
}
