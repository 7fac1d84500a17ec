import type { Command } from 'commander';
import { WispError } from '../../core/index.js';
import { parseNonNegative } from '../args.js';
import type { CliContext } from '../context.js';
import { EXIT_INTERRUPTED } from '../prompt.js';

const HELP = `
The panel is a small web server in this process, on 127.0.0.1 (and ::1) only, connected to
the daemon's socket as one client: Services (status, add a local or remote server, edit,
variables and headers write-only, trust and activate, disable, remove, stderr, tools),
Approvals (answer any client's pending approvals, live), Installs (plan, approve, a
progress bar, the attempts), Sources (merged config entries; reload, add a project), Chat
(sessions, the streaming answer, approvals inline) and Events (status and events, live).

It prints a URL with a one-time token on stdout and opens it in your browser when there is
a desktop. The token is exchanged for a cookie (HttpOnly, SameSite=Strict) at the first
visit and stops working; every other request without that cookie is refused. Keep the URL
to yourself until then: anyone who opens it first gets the panel. It stops on Ctrl-C
(exit 130) and when the daemon stops (exit 3).

With --demo it needs no daemon: the panel runs an in-memory demo (sample services, where
a command named fail shows a start failure; a scripted model that walks the install ->
activation -> call approvals). Nothing runs, nothing is saved, the keychain is never
touched, and every page says so.
`;

interface UiOptions {
  port?: number;
  open: boolean;
  demo?: boolean;
}

/** wispctl ui: the local web panel (src/ui), for as long as this command runs. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('ui')
    .description('serve the local web panel (services, approvals, installs, sources, chat, events) and open it in the browser')
    .option('--port <n>', 'listen on this port (default: a free one)', (v) => parsePort(v))
    .option('--no-open', 'do not open a browser; just print the URL')
    .option('--demo', 'an in-memory demo instead of the daemon: nothing runs, nothing is saved')
    .addHelpText('after', HELP)
    .action((opts: UiOptions) => runPanel(ctx, opts));
}

function parsePort(value: string): number {
  const port = parseNonNegative(value, '--port');
  if (port < 1 || port > 65535) throw new WispError('INVALID_PARAMS', '--port must be between 1 and 65535');
  return port;
}

async function runPanel(ctx: CliContext, opts: UiOptions): Promise<void> {
  // Loaded here, so that no other command pays for node:http.
  const { startPanel, openBrowser } = await import('../../ui/index.js');
  const demo = opts.demo === true;
  const panel = await startPanel({ socket: demo ? { demo } : ctx.paths().socket, port: opts.port ?? 0 });
  ctx.print({ url: panel.url, addresses: panel.addresses, demo }, () => panel.url);
  const what = demo ? 'an in-memory demo (nothing runs, nothing is saved)' : ctx.paths().socket;
  ctx.io.err(`wisp panel on ${panel.addresses.join(' and ')} for ${what}: the URL above works once. Ctrl-C stops it.`);
  if (opts.open) {
    const opened = await openBrowser(panel.url);
    if (!opened) ctx.io.err('no browser was opened (no desktop here, or no opener): open the URL above yourself');
  }
  const interrupted = new AbortController();
  const onSigint = (): void => {
    interrupted.abort();
    void panel.close();
  };
  process.once('SIGINT', onSigint);
  const how = await panel.ended;
  process.off('SIGINT', onSigint);
  if (interrupted.signal.aborted) {
    ctx.io.err('panel stopped');
    process.exitCode = EXIT_INTERRUPTED;
    return;
  }
  throw new WispError('DAEMON_NOT_RUNNING', `the daemon went away (${how.reason}): the panel stopped`);
}
