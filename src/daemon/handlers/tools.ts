import { clientId, reviewPage, toolsPage } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The active tools, paged, and a call by a client (approved by a human first, in ToolCalls). */
export function toolHandlers({ supervisor, toolCalls, registry }: Pick<DaemonParts, 'supervisor' | 'toolCalls' | 'registry'>): Pick<Handlers, 'tools.list' | 'tools.call' | 'tools.review' | 'tools.accept'> {
  return {
    // Held tools too, each with its pin status: front-ends show them; only trusted ones are callable.
    'tools.list': (params) => toolsPage(supervisor.listed(params.serviceId), params.cursor),
    'tools.review': (params) => {
      const config = registry.get({ id: params.serviceId });
      return reviewPage({ id: config.id, name: config.name }, supervisor.review(config.id, config.name), params.cursor);
    },
    'tools.accept': async (params) => {
      const config = registry.get({ id: params.serviceId });
      const done = await supervisor.accept(config.id, config.name, params.toolListVersion, params.tools);
      return { service: { id: config.id, name: config.name }, toolListVersion: params.toolListVersion, ...done };
    },
    'tools.call': (params, ctx) =>
      toolCalls.call({
        modelName: params.modelName,
        serviceId: params.serviceId,
        toolName: params.toolName,
        serviceName: registry.list().find((service) => service.id === params.serviceId)?.name,
        arguments: params.arguments,
        // Media whole only to a caller that asked (the gateway), of a service whose media setting is on.
        media: params.media === true ? (serviceId) => registry.get({ id: serviceId }).media === true : undefined,
        requester: { clientId: clientId(ctx.connection), sessionId: null, taskId: null },
        signal: ctx.callSignal,
        abort: (reason) => ctx.abort(reason),
      }),
  };
}
