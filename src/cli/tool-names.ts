import type { WispClient } from '../control/client.js';
import { allTools } from './pages.js';
import { clean, showArg } from './render.js';

/**
 * What a transcript's model-facing tool names (`mcp_<service>_<digest>`) stand for, as a human
 * reads them: `service/tool`. The daemon records only the model-facing name (that is what the
 * model was given); the active tools say which service and tool each is. A name of a service
 * that is not active now keeps its service name, with the tool unknown; the host's own tools
 * (mcp_list_services, mcp_search_tools...) are named as such. Every label is cleaned here.
 */

const MCP_NAME = /^mcp_([0-9a-f]{12})_[0-9a-f]{16}$/;

export type ToolLabel = (modelName: string) => string;

/** Labels for the model-facing names given (looked up only when some are a server's tools). */
export async function toolLabels(client: WispClient, modelNames: readonly string[]): Promise<ToolLabel> {
  const known = new Map<string, string>();
  const servers = modelNames.filter((name) => MCP_NAME.test(name));
  if (servers.length > 0) {
    for (const tool of await allTools(client)) known.set(tool.modelName, `${clean(tool.serviceName)}/${showArg(tool.name)}`);
    if (servers.some((name) => !known.has(name))) {
      const { services } = await client.call('services.list');
      for (const name of servers) {
        if (known.has(name)) continue;
        const prefix = MCP_NAME.exec(name)?.[1] ?? '';
        const service = services.find((s) => s.id.replace(/[^0-9a-f]/gi, '').toLowerCase().startsWith(prefix));
        known.set(name, service !== undefined ? `${clean(service.name)}/? (a tool of ${clean(service.name)}, not active now)` : `${clean(name)} (a tool of a removed service)`);
      }
    }
  }
  return (modelName) => known.get(modelName) ?? (modelName.startsWith('mcp_') ? `host tool ${clean(modelName)}` : clean(modelName));
}
