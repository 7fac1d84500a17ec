import type { Command } from 'commander';
import { PROFILE_NAME_PATTERN, SERVICE_NAME_PATTERN, WispError } from '../../core/index.js';
import { parseNonNegative } from '../args.js';
import { EXIT_INTERRUPTED } from '../cancelled.js';
import { CLIENT_NAMES } from '../client-config.js';
import type { CliContext } from '../context.js';
import { findProfile } from './mcp-profile.js';
import { stdin, stdinIsTerminal } from '../stdin.js';

const HELP = `
An MCP server for the MCP clients you already use (Claude Desktop, Claude Code, Cursor,
VS Code): add the command \`wispctl mcp serve\` to the client as a stdio server. It offers the
tools of the services Wisp runs (tools/list, as SERVICE__TOOL; with --defer-tools, a
search/execute pair instead), their resources and prompts, and every tools/call goes through the daemon: a
human approves it in Wisp (wispctl, chat, the web panel), secrets are redacted from results,
failures come back as results naming the code (APPROVAL_DENIED: ...). Host tools (register,
install, activate) are never offered. Each connection is one client of the daemon, named
after the MCP client (client-N (mcp:NAME)) in approvals, events and the audit log.

Tool names are SERVICE__TOOL, the same across restarts; a name that is not a valid MCP
tool name (1-128 of A-Z a-z 0-9 _ . -) is cleaned and gets a digest suffix. With
--service NAME it serves that one service under its tools' own names, as if the client
were connected to the server directly (still through Wisp's approvals). With --profile NAME it
serves exactly the services of that profile (wispctl mcp profile), as the daemon has it now:
an edit reaches connected clients at once (tools/list_changed), a service
deleted drops out, and a profile removed serves nothing. While the daemon answers, an unknown
profile stops it at the start (PROFILE_NOT_FOUND).

It finds the daemon as every wispctl command does (--socket, WISP_SOCKET, the default socket)
and, when nothing is there and no socket was named, through the daemon's pointer in the data
dir (<data>/wispd-socket.json): MCP clients start it without XDG_RUNTIME_DIR, where the socket
is on Linux. The snippets of --print-config and connect-client name the socket (--socket).
Without a socket named, it looks again before each reconnection, so a daemon started again
on another socket is found through its new pointer.

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

/** What `mcp serve` says when its stdin is a terminal, not an MCP client. */
export const TERMINAL_NOTE =
  'wispctl mcp serve: waiting for an MCP client on stdin (MCP JSON-RPC, one message per line); it is meant to be started by one. ' +
  `To connect a client: wispctl mcp connect-client ${CLIENT_NAMES.join('|')}, ` +
  'or wispctl mcp serve --print-config CLIENT for its config snippet. Ctrl-C stops it.';

interface ServeOptions {
  services?: string;
  profile?: string;
  service?: string;
  http?: boolean;
  port?: number;
  approveInClient?: boolean;
  deferTools?: boolean;
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
    .option('--service <name>', 'only this service, under its tools\' own names (as if connected to it directly)')
    .option('--profile <name>', 'only the services of this profile (wispctl mcp profile), as the daemon has it now (an edit applies at once)')
    .option('--http', 'serve streamable HTTP on 127.0.0.1 instead of stdio; prints the URL and a bearer token')
    .option('--port <n>', 'with --http: listen on this port (default: a free one)', (v) => parsePort(v))
    .option('--idle-timeout <seconds>', `with --http: close a session idle this long (no request running, no stream open); 1-${MAX_IDLE_TIMEOUT_S}, default 600`, (v) => parseIdleTimeout(v))
    .option('--approve-in-client', 'also offer each approval to the calling client (an MCP elicitation; an input_required round to a 2026-07-28 client), when it supports that; the first answer wins')
    .option('--defer-tools', 'offer two tools, mcp_search_tools and mcp_execute_tool, instead of the whole list (for clients that hold many tools badly)')
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

/**
 * --profile goes alone, and names a profile the daemon has, when one answers: a client set up
 * with a profile removed since is told so at once. Without a daemon it starts (it serves
 * nothing until one answers, and then only the profile's services).
 */
async function checkProfile(ctx: CliContext, opts: ServeOptions): Promise<void> {
  const profile = opts.profile ?? '';
  if (opts.service !== undefined || opts.services !== undefined) throw new WispError('INVALID_PARAMS', '--profile goes alone: the profile names its services (not with --services or --service)');
  if (!new RegExp(PROFILE_NAME_PATTERN).test(profile)) throw new WispError('INVALID_PARAMS', '--profile takes a profile name (1-32 of A-Z a-z 0-9 _ -)');
  try {
    await ctx.withClient((client) => findProfile(client, profile));
  } catch (error) {
    if (!(error instanceof WispError && error.code === 'DAEMON_NOT_RUNNING')) throw error;
  }
}

async function serve(ctx: CliContext, opts: ServeOptions): Promise<void> {
  if (opts.port !== undefined && opts.http !== true) throw new WispError('INVALID_PARAMS', '--port goes with --http');
  if (opts.idleTimeout !== undefined && opts.http !== true) throw new WispError('INVALID_PARAMS', '--idle-timeout goes with --http');
  if (opts.service !== undefined && opts.services !== undefined) throw new WispError('INVALID_PARAMS', '--service and --services go alone: one service under its own names, or several');
  if (opts.service !== undefined && !new RegExp(SERVICE_NAME_PATTERN).test(opts.service)) throw new WispError('INVALID_PARAMS', '--service takes one service name');
  if (opts.profile !== undefined) await checkProfile(ctx, opts);
  const options = {
    services: opts.service !== undefined ? new Set([opts.service]) : parseServices(opts.services),
    ...(opts.profile !== undefined ? { profile: opts.profile } : {}),
    ownNames: opts.service !== undefined,
    approveInClient: opts.approveInClient === true,
    deferTools: opts.deferTools === true,
  };
  // Looked up again before each connection: a daemon stopped and started on another socket
  // (another XDG_RUNTIME_DIR, another --socket) is found through its pointer in the data dir.
  // A socket named here (--socket, WISP_SOCKET, WISP_RUNTIME_DIR) stays the one tried.
  const first = ctx.paths().socket;
  let fresh = false;
  const socket = (): string => {
    // The first attempt uses the lookup the command already made.
    if (!fresh) {
      fresh = true;
      return first;
    }
    return ctx.locate().socket;
  };
  // Loaded here, so that no other command pays for the MCP SDK.
  const gateway = await import('../../gateway/index.js');
  if (opts.http !== true) {
    // stdin is the MCP channel (the gateway reads it): opened through the CLI's own door, so
    // it is let go when the command ends, as after every command that reads stdin.
    stdin();
    // Typed at a terminal by mistake, it would sit silent: say what it waits for, on stderr
    // (stdout is the channel), and go on serving (a person may paste JSON-RPC lines to try it).
    if (stdinIsTerminal()) ctx.io.err(TERMINAL_NOTE);
    // stdout is the MCP channel: nothing else may be written to it.
    await gateway.serveStdio(socket, options);
    return;
  }
  const served = await gateway.serveHttp(socket, options, {
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
