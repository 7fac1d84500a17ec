import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DaemonLink } from './link.js';
import { gatewayServer, type GatewayOptions } from './server.js';

/**
 * `wispctl mcp serve`: one MCP connection on stdin/stdout, for as long as the client keeps
 * stdin open. Resolves when it closes. Nothing but MCP may be written to stdout.
 */
export async function serveStdio(socket: string, options: GatewayOptions): Promise<void> {
  const link = new DaemonLink(socket);
  // Tried before initialize is answered, so its instructions can say whether the daemon runs.
  await link.connect();
  const server = gatewayServer(link, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  await link.close();
}
