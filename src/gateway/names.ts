import { createHash } from 'node:crypto';
import type { ToolInfo } from '../core/index.js';

/** MCP's rule for tool names (2025-11-25, "Tool names"): 1 to 128 of these characters. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const MAX_NAME = 128;
/** Between the service and the tool. Service names never need it, so a readable name is never a bare tool name. */
export const SEPARATOR = '__';

/**
 * `prefix` + the tool's name, valid by MCP's rules: as it is when it is valid and fits;
 * otherwise every other character becomes `_`, it is cut to fit, and `_` and 8 hex of
 * the sha256 of the server's name follow, so two names that clean alike stay apart.
 * Depends only on the prefix and the name: the same across restarts.
 */
function validName(prefix: string, tool: string): string {
  const cleaned = tool.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (cleaned === tool && tool !== '' && prefix.length + tool.length <= MAX_NAME) return prefix + tool;
  const digest = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${prefix}${cleaned.slice(0, MAX_NAME - prefix.length - 1 - digest.length)}_${digest}`;
}

/**
 * The names a client is offered, by tool: `<service>__<tool>` (service names are valid
 * MCP name characters already, at most 64), or with `own` (one service served as if the
 * client were connected to it) the tool's own name; each made valid by validName. Unique
 * by construction: a name that two tools would get (a server's tool named like another's
 * cleaned one, or service "a" with tool "b__c" beside service "a__b" with tool "c") is
 * given to neither, nor one that is some tool's model-facing name; those fall back to their
 * model-facing name (`mcp_<id>_<digest>`: unique in the daemon, and never containing `__`).
 */
export function offeredNames(tools: readonly ToolInfo[], own: boolean): Map<ToolInfo, string> {
  const wanted = new Map<ToolInfo, string>();
  const count = new Map<string, number>();
  for (const tool of tools) {
    const name = validName(own ? '' : `${tool.serviceName}${SEPARATOR}`, tool.name);
    wanted.set(tool, name);
    count.set(name, (count.get(name) ?? 0) + 1);
  }
  // A server's own name may be another tool's model-facing name (only with `own`: those never contain `__`).
  const models = new Set(tools.map((tool) => tool.modelName));
  const names = new Map<ToolInfo, string>();
  for (const [tool, name] of wanted) names.set(tool, count.get(name) === 1 && !models.has(name) ? name : tool.modelName);
  return names;
}
