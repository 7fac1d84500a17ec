import type { Command } from 'commander';
import { watchApprovals } from '../approval-console.js';
import type { CliContext } from '../context.js';
import { allApprovals, approvalId } from '../ids.js';
import { documentOutput } from '../output.js';
import { approvalStateLine, approvalsText, clean, networkTarget } from '../render.js';
import { approvalsWideText } from '../render/wide.js';

const WATCH_HELP = `
--watch: an approval console. Each pending approval (those open now, then each one as it is
asked, oldest first) is shown with its exact arguments and asked y/N, one at a time, so this
terminal can answer for a model or a command working elsewhere. One answered elsewhere while
it is asked is reported and skipped. Ctrl-C stops the console (exit 130) and leaves the
approval being asked pending, not denied: it belongs to whoever asked, and can still be
answered from anywhere (the console says which one). Answers go to stdout as ID: approved
(JSON Lines with -o json), everything else to stderr.`;

/** wispctl approvals [--watch], approve ID, deny ID: answering from any terminal. */
export function register(program: Command, ctx: CliContext): void {
  const approvals = program
    .command('approvals')
    .description('list open approvals (with --all, recently resolved ones too); with --watch, answer each as it comes')
    .option('--all', 'include resolved approvals')
    .option('-w, --watch', 'an approval console: ask y/N for each pending approval as it arrives (see below)')
    .addHelpText('after', WATCH_HELP)
    .action((opts: { all?: boolean; watch?: boolean }) =>
      ctx.withClient(async (client) => {
        if (opts.watch === true) {
          await watchApprovals(client, ctx);
          return;
        }
        const list = await allApprovals(client, opts.all === true);
        ctx.print(list, () => approvalsText(list), () => approvalsWideText(list));
      }),
    );
  documentOutput(approvals, {
    json: 'an array of approvals, oldest first (every page of approvals.list)',
    fields: ['id', 'kind', 'state', 'summary', 'requester', 'binding', 'createdAt'],
    wide: 'adds when each was asked, the task that asked, and what it is bound to',
  });

  for (const [command, decision] of [
    ['approve', 'approve'],
    ['deny', 'deny'],
  ] as const) {
    const answer = program
      .command(command)
      .description(`${decision} a pending approval (the first answer from any client wins)`)
      .argument('<id>', 'approval id, or its first 4+ characters if no other approval starts the same way (wispctl approvals lists them)');
    if (decision === 'approve') answer.option('--always', 'a network connection (network.connect): let it through and grant its host and port for good (a live grant: wispctl mcp show lists it, wispctl mcp allow NAME HOST:PORT --revoke takes it back); without it, this connection only');
    answer.action((given: string, opts: { always?: boolean }) =>
      ctx.withClient(async (client) => {
        const id = await approvalId(client, given);
        const { approval } = await client.call('approvals.respond', { id, decision, ...(opts.always === true ? { scope: 'always' as const } : {}) });
        ctx.print(approval, () => `${approvalStateLine(approval)}${opts.always === true ? ` (and ${networkTarget(approval)} granted to ${clean(approval.summary.serviceName)} for good)` : ''}`);
      }),
    );
  }
}
