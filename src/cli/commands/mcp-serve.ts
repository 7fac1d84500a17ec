import type { Command } from 'commander';
import { WispError } from '../../core/index.js';
import { parseNonNegative } from '../args.js';
import { EXIT_INTERRUPTED } from '../cancelled.js';
import type { CliContext } from '../context.js';
import { stdin } from '../stdin.js';

const HELP = `
An MCP server for the MCP clients you already use (Claude Desktop, Claude Code, Cursor,
VS Code): add the command \`wispctl mcp serve\` to the client as a stdio server. It offers the
tools of the services Wisp runs (tools/list, under stable names; above the model setting
deferToolsAbove, a search/execute pair), and every tools/call goes through the daemon: a
human approves it in Wisp (wispctl, chat, the web panel), secrets are redacted from results,
failures come back as results naming the code (APPROVAL_DENIED: ...). Host tools (register,
install, activate) are never offered. Each connection is one client of the daemon, named
after the MCP client (client-N (mcp:NAME)) in approvals, events and the audit log.

It finds the daemon as every wispctl command does (--socket, WISP_SOCKET, the default socket)
and, when nothing is there and no socket was named, through the daemon's pointer in the data
dir (<data>/wispd-socket.json): MCP clients start it without XDG_RUNTIME_DIR, where the socket
is on Linux. The snippets of --print-config and connect-client name the socket (--socket).

When the daemon is not running, or stops, restarts or dies under it, it still answers and
keeps running: tools/list is empty (with notifications/tools/list_changed when the tools
go), every call fails with DAEMON_NOT_RUNNING until a daemon is started (wispctl daemon
start), and it reconnects by itself within a second and sends list_changed again.

With --http it serves streamable HTTP on 127.0.0.1 only instead, and prints the URL and a
bearer token once: every request needs the token, and its Host must be the loopback
address (a web page's request, with another Origin, is refused). Ctrl-C stops it. A session
with no request running and no stream open for --idle-timeout seconds (default 600) is
closed: its client's next request gets 404 (session not found) and must initialize again.
`;

interface ServeOptions {
  services?: string;
  http?: boolean;
  port?: number;
  approveInClient?: boolean;
  idleTimeout?: number;
}

/** The longest --idle-timeout: a day. */
const MAX_IDLE_TIMEOUT_S = 86_400;

/** wispctl mcp serve: the MCP gateway (src/gateway, loaded only by this command). */
export function register(mcp: Command, ctx: CliContext): void {
  mcp
    .command('serve')
    .description('be an MCP server (stdio, or --http) for MCP clients: the tools Wisp runs, every call approved in Wisp')
    .option('--services <names>', 'only the tools of these services (comma-separated names)')
    .option('--http', 'serve streamable HTTP on 127.0.0.1 instead of stdio; prints the URL and a bearer token')
    .option('--port <n>', 'with --http: listen on this port (default: a free one)', (v) => parsePort(v))
    .option('--idle-timeout <seconds>', `with --http: close a session idle this long (no request running, no stream open); 1-${MAX_IDLE_TIMEOUT_S}, default 600`, (v) => parseIdleTimeout(v))
    .option('--approve-in-client', 'also offer each approval to the calling client (MCP elicitation), when it supports that; the first answer wins')
    .addHelpText('after', HELP)
    .action((opts: ServeOptions) => serve(ctx, opts));
}

function parsePort(value: string): number {
  const port = parseNonNegative(value, '--port');
  if (port < 1 || port > 65535) throw new WispError('INVALID_PARAMS', '--port must be between 1 and 65535');
  return port;
}

function parseIdleTimeout(value: string): number {
  const seconds = parseNonNegative(value, '--idle-timeout');
  if (seconds < 1 || seconds > MAX_IDLE_TIMEOUT_S) throw new WispError('INVALID_PARAMS', `--idle-timeout must be between 1 and ${MAX_IDLE_TIMEOUT_S} seconds`);
  return seconds;
}

function parseServices(value: string | undefined): ReadonlySet<string> | null {
  if (value === undefined) return null;
  const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) throw new WispError('INVALID_PARAMS', '--services takes service names, comma-separated');
  return new Set(names);
}

async function serve(ctx: CliContext, opts: ServeOptions): Promise<void> {
  if (opts.port !== undefined && opts.http !== true) throw new WispError('INVALID_PARAMS', '--port goes with --http');
  if (opts.idleTimeout !== undefined && opts.http !== true) throw new WispError('INVALID_PARAMS', '--idle-timeout goes with --http');
  const options = { services: parseServices(opts.services), approveInClient: opts.approveInClient === true };
  // Loaded here, so that no other command pays for the MCP SDK.
  const gateway = await import('../../gateway/index.js');
  if (opts.http !== true) {
    // stdin is the MCP channel (the gateway reads it): opened through the CLI's own door, so
    // it is let go when the command ends, as after every command that reads stdin.
    stdin();
    // stdout is the MCP channel: nothing else may be written to it.
    await gateway.serveStdio(ctx.paths().socket, options);
    return;
  }
  const served = await gateway.serveHttp(ctx.paths().socket, options, {
    port: opts.port ?? 0,
    ...(opts.idleTimeout !== undefined ? { idleSessionMs: opts.idleTimeout * 1000 } : {}),
  });
  ctx.print({ url: served.url, token: served.token }, () => `${served.url}\nAuthorization: Bearer ${served.token}`);
  ctx.io.err(`MCP gateway on ${served.url} for ${ctx.paths().socket}: every request needs the bearer token above (shown once). Ctrl-C stops it.`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await served.close();
  ctx.io.err('MCP gateway stopped');
  process.exitCode = EXIT_INTERRUPTED;
}
