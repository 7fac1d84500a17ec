import type { Command } from 'commander';

/**
 * What a read command prints with -o json|wide, in its own --help. The JSON fields listed are
 * the ones a script may rely on (test/integration/cli-output.test.ts reads them from --help
 * and checks every one is there), so the help cannot drift from what is printed.
 */
export interface OutputDoc {
  /** What the JSON is: `an array of services`, `one object`. */
  readonly json: string;
  /** The top-level fields of the object (or of each array item) a script may rely on. */
  readonly fields: readonly string[];
  /** What -o wide adds; without it, the default text already shows every field. */
  readonly wide?: string;
  /** JSON Lines (one compact object per line, as they come) rather than one indented value. */
  readonly lines?: boolean;
}

export function outputHelp(doc: OutputDoc): string {
  return [
    '',
    'Output (-o and --json go before or after the command):',
    `  -o json, --json  ${doc.json}, ${doc.lines === true ? 'as JSON Lines on stdout (one object per line)' : 'indented JSON on stdout'}; fields: ${doc.fields.join(', ')}`,
    `  -o wide          ${doc.wide ?? 'the same as the default, which shows every field'}`,
  ].join('\n');
}

/** Adds the output section to a read command's --help. */
export function documentOutput(command: Command, doc: OutputDoc): Command {
  return command.addHelpText('after', outputHelp(doc));
}

/** The same, for a subcommand registered elsewhere (found by name; a missing one is a bug caught by the help tests). */
export function documentSubcommand(parent: Command, name: string, doc: OutputDoc): void {
  const command = parent.commands.find((c) => c.name() === name);
  if (command !== undefined) documentOutput(command, doc);
}
