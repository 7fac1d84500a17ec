import { Command, CommanderError } from 'commander';
import { ERROR_CATALOG, EXIT } from '../core/index.js';
import type { CliIo } from './context.js';
import { table } from './render.js';
import { closest } from './suggest.js';

/**
 * What wispctl says when it is used wrongly: a short usage when no command is given, one line
 * for an unknown command (with the close one, if any), and where to find the rest. The full
 * list of error codes is `wispctl help errors` (and docs/errors.md), never every usage error.
 */

export const EXIT_STATUSES =
  'Exit statuses: 0 ok, 1 failure, 2 bad usage or input, 3 no daemon, 4 not found, 5 conflict, 6 limit reached, 7 refused, 130 interrupted (Ctrl-C).';

/** A command's one-line summary: its description up to the first clause (`show the daemon: version...` → `show the daemon`). */
function summaryOf(command: Command): string {
  const text = command.summary() !== '' ? command.summary() : command.description();
  return text.split(/[:;]\s|\s\(/)[0] ?? text;
}

/** `wispctl` with no command: the commands, one line each, and where to find more (for stderr). */
export function shortUsage(program: Command): string {
  const commands = program.createHelp().visibleCommands(program);
  const width = Math.max(...commands.map((command) => command.name().length));
  return [
    'Usage: wispctl [options] <command>',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name().padEnd(width)}  ${summaryOf(command)}`),
    '',
    'wispctl <command> --help shows how to use a command; wispctl --help the global options;',
    'wispctl help errors the exit statuses and error codes.',
  ].join('\n');
}

/** The exit statuses, then every error code with its exit status and first sentence, aligned. */
export function errorsText(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, entry]) => [code, String(entry.exit), /^.*?\.(?=\s|$)/.exec(entry.description)?.[0] ?? entry.description]);
  return `${EXIT_STATUSES}\n\n${table(['CODE', 'EXIT', 'MEANING'], rows)}\n\ndocs/errors.md explains each code.`;
}

/** `wispctl errors` (and so `wispctl help errors`): the table above. */
export function registerErrors(program: Command, io: CliIo): void {
  program
    .command('errors')
    .description('list the exit statuses and error codes')
    .addHelpText('after', `\n${errorsText()}`)
    .action(() => io.out(errorsText()));
}

/** `--scope user`, `-s user`, `--scope=user`, `-suser`: claude's `mcp add -s`, which commander would answer with "did you mean --socket?". */
const SCOPE_OPTION = /^error: unknown option '(--scope(?:=[^']*)?|-s[^']*)'.*$/s;

/** Commander's error for an unknown option, unless it is claude's --scope: then what Wisp does instead. */
export function withScopeHint(text: string): string {
  const scope = SCOPE_OPTION.exec(text.trimEnd());
  if (scope === null) return text;
  return (
    `error: unknown option '${scope[1] ?? ''}': Wisp has no scopes. Its registry is per user (a service added once is yours in every project); ` +
    'a project\'s own servers come from its .mcp.json: wispctl mcp sources add-project DIR\n'
  );
}

function fullName(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * On every command: a usage error ends with one line pointing at that command's --help, not
 * the whole help; an unknown subcommand is one line naming it and, when there is one, the
 * close command, exit status 2 (EXIT.usage).
 */
export function guideUsageErrors(command: Command, io: CliIo): void {
  const name = fullName(command);
  command.showHelpAfterError(`(${name} --help shows how to use it)`);
  command.configureOutput({ ...command.configureOutput(), outputError: (text, write) => write(withScopeHint(text)) });
  if (command.commands.length > 0) {
    // Commander emits this only when the word is none of the command's subcommands.
    command.on('command:*', (operands: string[]) => {
      const word = operands[0] ?? '';
      const names = command.commands.flatMap((sub) => [sub.name(), ...sub.aliases()]);
      const near = closest(word, names);
      const hint = near !== undefined ? `; did you mean ${name} ${near}?` : `; ${name} --help lists the commands`;
      io.err(`error: unknown command '${word}'${hint}`);
      throw new CommanderError(EXIT.usage, 'commander.unknownCommand', `unknown command '${word}'`);
    });
  }
  for (const sub of command.commands) guideUsageErrors(sub, io);
}
