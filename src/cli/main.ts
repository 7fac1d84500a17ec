import { Command, CommanderError, Option } from 'commander';
import { packageVersion } from '../control/client.js';
import { EXIT, WispError, exitStatusFor } from '../core/index.js';
import { cliContext, type CliContext, type CliIo } from './context.js';
import { CANCELLED, EXIT_INTERRUPTED, PromptCancelled } from './cancelled.js';
import { errorLines, terminalText } from './render.js';
import { EXIT_STATUSES, guideUsageErrors, registerErrors, shortUsage } from './usage.js';
import { releaseStdin } from './stdin.js';

export type { CliIo } from './context.js';

interface CommandGroup {
  /** The top-level commands the group registers (test/unit/cli/groups.test.ts holds it to that). */
  readonly commands: readonly string[];
  readonly load: () => Promise<{ register: (program: Command, ctx: CliContext) => void }>;
  /** It needs every group loaded (completion: the whole command tree). */
  readonly all?: boolean;
}

/**
 * The command groups, in the order `wispctl --help` lists them. A command loads its own group
 * only: loading every group (their renderers, prompts, the service manager) was most of what
 * a short command like `wispctl status` spent before reaching the daemon.
 */
export const GROUPS: readonly CommandGroup[] = [
  { commands: ['status'], load: () => import('./commands/status.js') },
  { commands: ['events'], load: () => import('./commands/events.js') },
  { commands: ['mcp'], load: () => import('./commands/mcp.js') },
  { commands: ['send', 'chat'], load: () => import('./commands/chat.js') },
  { commands: ['sessions'], load: () => import('./commands/sessions.js') },
  { commands: ['model'], load: () => import('./commands/model.js') },
  { commands: ['install'], load: () => import('./commands/install.js') },
  { commands: ['approvals', 'approve', 'deny'], load: () => import('./commands/approvals.js') },
  { commands: ['elicitations', 'elicitation'], load: () => import('./commands/elicitations.js') },
  { commands: ['ui'], load: () => import('./commands/ui.js') },
  { commands: ['call'], load: () => import('./commands/call.js') },
  { commands: ['daemon'], load: () => import('./commands/daemon.js') },
  { commands: ['completion'], load: () => import('./commands/completion.js'), all: true },
];

/** The global options that take a value (the program's own, below). */
const VALUE_OPTIONS = new Set(['--socket', '--data-dir', '--output', '-o']);

/**
 * Where the command word is in the arguments after `node wispctl`: its index; 'none' when
 * there are only global options we know; 'unknown' when an option we do not know comes first.
 */
function commandWord(args: readonly string[]): number | 'none' | 'unknown' {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (VALUE_OPTIONS.has(arg)) i += 1;
    else if (arg === '--json' || /^-o[^-]/.test(arg) || [...VALUE_OPTIONS].some((name) => arg.startsWith(`${name}=`))) continue;
    else if (arg.startsWith('-')) return 'unknown';
    else return i;
  }
  return 'none';
}

/**
 * The groups a command line needs: the one owning its command word, or every group when
 * there is none or it is not one of ours (help, a typo: commander then lists or suggests from
 * all of them) or anything before it is not a global option we know.
 */
export function groupsFor(argv: readonly string[]): readonly CommandGroup[] {
  const args = argv.slice(2);
  const at = commandWord(args);
  if (typeof at !== 'number') return GROUPS;
  const owner = GROUPS.find((group) => group.commands.includes(args[at] ?? ''));
  return owner !== undefined && owner.all !== true ? [owner] : GROUPS;
}

const defaultIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

async function buildProgram(io: CliIo, argv: readonly string[]): Promise<Command> {
  const program = new Command('wispctl')
    .description('Control wispd, the Wisp Host daemon, over its socket.')
    .version(packageVersion())
    .option('--socket <path>', 'daemon socket (default: WISP_SOCKET, else derived from the data dir)')
    .option('--data-dir <dir>', 'data directory of the daemon to talk to (default: WISP_HOME, else the platform data dir)')
    .option('--json', 'machine-readable JSON on stdout, for commands that print a result (before or after the command)')
    .addOption(new Option('-o, --output <format>', 'json: the same as --json; wide: more columns (ids, origins, times) where a read command has them').choices(['json', 'wide']))
    // Every command's --help lists --json, --socket and --data-dir too: they apply after the command word as well.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .addHelpText('after', `\n${EXIT_STATUSES}\nError codes: wispctl help errors (docs/errors.md explains each).`);
  const ctx = cliContext(program, io);
  const modules = await Promise.all(groupsFor(argv).map((group) => group.load()));
  for (const group of modules) group.register(program, ctx);
  registerErrors(program, io);
  guideUsageErrors(program, io);
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

/** The streams already told to stop quietly: main may run more than once in a process (the tests run it per command). */
const quieted = new WeakSet<NodeJS.WriteStream>();

/** The reader of our output went away (`wispctl errors | head -1`): stop quietly, as git and ls do, not with a stack. */
function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  if (quieted.has(stream)) return;
  quieted.add(stream);
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

export async function main(argv: readonly string[], rawIo: CliIo = defaultIo): Promise<void> {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  // The last guard: whatever a renderer forgot, nothing unsafe reaches the terminal.
  const io: CliIo = { out: (text) => rawIo.out(terminalText(text)), err: (text) => rawIo.err(terminalText(text)) };
  try {
    const program = await buildProgram(io, argv);
    if (commandWord(argv.slice(2)) === 'none') {
      // No command: what there is, briefly, as a usage error (as commander and kubectl do).
      io.err(shortUsage(program));
      process.exitCode = EXIT.usage;
      return;
    }
    await program.parseAsync([...argv]);
  } catch (error) {
    report(error, io);
  } finally {
    // A terminal's stdin stays referenced after a prompt has used it: let it go, or the
    // process would not exit.
    releaseStdin();
  }
}
