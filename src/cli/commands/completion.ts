import { Argument, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { bashScript, fishScript, zshScript } from '../completion.js';

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** wispctl completion bash|zsh|fish: a completion script, from the command tree itself. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description('print a shell completion script (commands, subcommands, options)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(Object.keys(SCRIPTS)))
    .addHelpText(
      'after',
      '\nInstall:\n  bash: echo \'eval "$(wispctl completion bash)"\' >> ~/.bashrc\n  zsh:  wispctl completion zsh > "${fpath[1]}/_wispctl"   (then start a new shell)\n  fish: wispctl completion fish > ~/.config/fish/completions/wispctl.fish',
    )
    .action((shell: keyof typeof SCRIPTS, _opts: unknown, command: Command) => {
      let root = command;
      while (root.parent !== null) root = root.parent;
      ctx.io.out(SCRIPTS[shell](root).trimEnd());
    });
}
