import { StdioServerTransport, serveStdio as serveBothEras } from '@modelcontextprotocol/server/stdio';
import { FrameGuard, refusalLine } from './frame-guard.js';
import { DaemonLink, newGatewayId, type SocketLocator } from './link.js';
import { gatewayServer, type GatewayOptions } from './server.js';

/**
 * `wispctl mcp serve`: one MCP connection on stdin/stdout, for as long as the client keeps
 * stdin open. Resolves when it closes. Nothing but MCP may be written to stdout.
 *
 * `socket`: the daemon's socket, or a way to look it up before each connection attempt (a
 * gateway started without --socket finds a daemon restarted on another socket).
 */
export async function serveStdio(socket: SocketLocator, options: GatewayOptions): Promise<void> {
  // One process, one gateway: its connection counts as one client whatever it reconnects as.
  const link = new DaemonLink(socket, newGatewayId());
  // Tried before initialize is answered, so its instructions can say whether the daemon runs.
  await link.connect();
  // Every line from the client is measured before the SDK parses it; a refused one is answered
  // here, in one write (the SDK writes whole lines too, so the two never interleave within a line).
  const guard = new FrameGuard((refusal) => void process.stdout.write(refusalLine(refusal)));
  process.stdin.pipe(guard);
  const wire = new StdioServerTransport(guard, process.stdout);
  // The successor SDK's stdio entry decides the era from the client's first message (initialize:
  // 2025; server/discover or a request carrying the 2026-07-28 `_meta` envelope: 2026) and
  // serves the connection with one instance of gatewayServer, made for that era; it answers
  // subscriptions/listen itself and routes list_changed onto the client's subscriptions.
  const handle = serveBothEras(() => gatewayServer(link, options), { transport: wire, onerror: () => undefined });
  const closed = new Promise<void>((resolve) => {
    const close = wire.onclose;
    wire.onclose = () => {
      close?.();
      resolve();
    };
    process.stdin.once('end', () => resolve());
  });
  await closed;
  await handle.close().catch(() => undefined);
  process.stdin.unpipe(guard);
  await link.close();
}
