import type { Command } from 'commander';
import type { Approval } from '../../core/index.js';
import type { CliContext } from '../context.js';
import { approvalStateLine, approvalsText } from '../render.js';

/** wispctl approvals, approve ID, deny ID: answering from any terminal. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('approvals')
    .description('list open approvals (with --all, recently resolved ones too)')
    .option('--all', 'include resolved approvals')
    .action((opts: { all?: boolean }) =>
      ctx.withClient(async (client) => {
        const approvals: Approval[] = [];
        let cursor: string | null = null;
        do {
          const page: { approvals: Approval[]; nextCursor: string | null } = await client.call('approvals.list', { all: opts.all === true, ...(cursor !== null ? { cursor } : {}) });
          approvals.push(...page.approvals);
          cursor = page.nextCursor;
        } while (cursor !== null);
        ctx.print(approvals, () => approvalsText(approvals));
      }),
    );

  for (const [command, decision] of [
    ['approve', 'approve'],
    ['deny', 'deny'],
  ] as const) {
    program
      .command(command)
      .description(`${decision} a pending approval (the first answer from any client wins)`)
      .argument('<id>', 'approval id (wispctl approvals lists them)')
      .action((id: string) =>
        ctx.withClient(async (client) => {
          const { approval } = await client.call('approvals.respond', { id, decision });
          ctx.print(approval, () => approvalStateLine(approval));
        }),
      );
  }
}
