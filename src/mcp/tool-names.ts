import { sha256Hex } from '../util/index.js';

/**
 * The model-facing name: stable across restarts and re-activations (it depends only on
 * the service's UUID and the original tool name), and valid for model APIs
 * (^[A-Za-z0-9_-]{1,64}$) whatever characters the server used.
 */
export function modelToolName(serviceId: string, toolName: string): string {
  const service = serviceId.replace(/[^0-9a-f]/gi, '').slice(0, 12).toLowerCase();
  return `mcp_${service}_${sha256Hex(toolName).slice(0, 16)}`;
}
