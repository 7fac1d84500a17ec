import type { WispClient } from '../control/client.js';
import type { ToolInfo } from '../core/index.js';

/** Every active tool (of one service, or all), through every page of tools.list. */
export async function allTools(client: WispClient, serviceId?: string): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call('tools.list', { ...(serviceId === undefined ? {} : { serviceId }), ...(cursor === undefined ? {} : { cursor }) });
    tools.push(...page.tools);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return tools;
}
