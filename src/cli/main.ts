import { Command, CommanderError } from 'commander';
import { packageVersion } from '../control/client.js';
import { ERROR_CATALOG, EXIT, WispError, exitStatusFor } from '../core/index.js';
import * as approvals from './commands/approvals.js';
import * as call from './commands/call.js';
import * as chat from './commands/chat.js';
import * as daemon from './commands/daemon.js';
import * as events from './commands/events.js';
import * as install from './commands/install.js';
import * as mcp from './commands/mcp.js';
import * as model from './commands/model.js';
import * as sessions from './commands/sessions.js';
import * as status from './commands/status.js';
import * as ui from './commands/ui.js';
import { cliContext, type CliContext, type CliIo } from './context.js';
import { CANCELLED, EXIT_INTERRUPTED, PromptCancelled } from './prompt.js';
import { errorLines, terminalText } from './render.js';

export type { CliIo } from './context.js';

/** The command groups, in the order `wispctl --help` lists them. */
const GROUPS: readonly { register: (program: Command, ctx: CliContext) => void }[] = [status, events, mcp, chat, sessions, model, install, approvals, ui, call, daemon];

const defaultIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

function errorCodeHelp(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, entry]) => `  ${code.padEnd(20)} exit ${entry.exit}`);
  return `\nExit statuses: 0 ok, 1 failure, 2 bad usage or input, 3 no daemon, 4 not found, 5 conflict, 6 limit reached, 7 refused, 130 interrupted (Ctrl-C).\nError codes (docs/errors.md explains each):\n${rows.join('\n')}\n`;
}

function buildProgram(io: CliIo): Command {
  const program = new Command('wispctl')
    .description('Control wispd, the Wisp Host daemon, over its socket.')
    .version(packageVersion())
    .option('--socket <path>', 'daemon socket (default: WISP_SOCKET, else derived from the data dir)')
    .option('--data-dir <dir>', 'data directory of the daemon to talk to (default: WISP_HOME, else the platform data dir)')
    .option('--json', 'machine-readable JSON output')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .addHelpText('after', errorCodeHelp())
    .showHelpAfterError();
  const ctx = cliContext(program, io);
  for (const group of GROUPS) group.register(program, ctx);
  return program;
}

/** How a command that threw ends: one message on stderr and the documented exit status. */
function report(error: unknown, io: CliIo): void {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return;
  }
  if (error instanceof PromptCancelled) {
    io.err(CANCELLED);
    process.exitCode = EXIT_INTERRUPTED;
    return;
  }
  for (const line of errorLines(error)) io.err(line);
  process.exitCode = error instanceof WispError ? exitStatusFor(error.code) : EXIT.failure;
}

export async function main(argv: readonly string[], rawIo: CliIo = defaultIo): Promise<void> {
  // The last guard: whatever a renderer forgot, nothing unsafe reaches the terminal.
  const io: CliIo = { out: (text) => rawIo.out(terminalText(text)), err: (text) => rawIo.err(terminalText(text)) };
  try {
    await buildProgram(io).parseAsync([...argv]);
  } catch (error) {
    report(error, io);
  } finally {
    // A terminal's stdin stays referenced after a prompt has used it: let it go, or the
    // process would not exit.
    process.stdin.pause();
    (process.stdin as { unref?: () => void }).unref?.();
  }
}
