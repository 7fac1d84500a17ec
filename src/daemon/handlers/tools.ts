import { clientId, toolsPage } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The active tools, paged, and a call by a client (approved by a human first, in ToolCalls). */
export function toolHandlers({ supervisor, toolCalls, registry }: Pick<DaemonParts, 'supervisor' | 'toolCalls' | 'registry'>): Pick<Handlers, 'tools.list' | 'tools.call'> {
  return {
    'tools.list': (params) => toolsPage(supervisor.tools(params.serviceId), params.cursor),
    'tools.call': (params, ctx) =>
      toolCalls.call({
        modelName: params.modelName,
        serviceId: params.serviceId,
        toolName: params.toolName,
        serviceName: registry.list().find((service) => service.id === params.serviceId)?.name,
        arguments: params.arguments,
        requester: { clientId: clientId(ctx.connection), sessionId: null, taskId: null },
        signal: ctx.signal,
        abort: (reason) => ctx.abort(reason),
      }),
  };
}
