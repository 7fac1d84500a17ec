import type { Command } from 'commander';
import type { WispClient } from '../../control/client.js';
import { EXIT, type Result } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { confirm } from '../prompt.js';
import { clean, fitToTerminal } from '../render.js';
import { offersReviewText, reviewQuestion, reviewText } from '../render/review.js';

type Review = Result<'tools.review'>;

/** wispctl mcp review: the tools a service changed or added since it was trusted, shown and accepted (or not). */
export function register(mcp: Command, ctx: CliContext): void {
  mcp
    .command('review')
    .description('show the tools a service changed or added since it was trusted (held: not callable), and accept them')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'accept without asking (for scripts); you accept exactly the definitions shown')
    .option('--no-accept', 'only show them')
    .action((name: string, opts: { yes?: boolean; accept: boolean }) => ctx.withClient((client) => review(client, ctx, name, opts)));
}

async function review(client: WispClient, ctx: CliContext, name: string, opts: { yes?: boolean; accept: boolean }): Promise<void> {
  const { service } = await client.call('services.get', ref(name));
  const first = await client.call('tools.review', { serviceId: service.id });
  const tools = await allHeld(client, service.id, first);
  // Its prompts and resource templates are pinned too: held ones are shown (and accepted) with the tools.
  const { held: offers } = await client.call('offers.review', { serviceId: service.id });
  const offered = offersReviewText(service.name, offers);
  if (!ctx.json()) ctx.io.out(fitToTerminal([...(tools.length > 0 || offers.length === 0 ? [reviewText(first, tools)] : []), ...(offered !== '' ? [offered] : [])].join('\n'), stdoutColumns()));
  if ((tools.length === 0 && offers.length === 0) || !opts.accept || (ctx.json() && opts.yes !== true)) {
    if (ctx.json()) ctx.print({ ...first, tools, nextCursor: null, offers }, () => '');
    return;
  }
  const question = tools.length > 0 ? reviewQuestion(first, tools.length + offers.length) : `Accept ${offers.length === 1 ? 'this' : `these ${offers.length}`} of ${clean(service.name)} as shown? [y/N] `;
  if (opts.yes !== true && !(await confirm(question, `not a terminal, so nobody can confirm: pass --yes to accept ${offers.length === 0 ? 'the tools' : 'what is'} shown`))) {
    ctx.io.err(`not accepted: ${offers.length === 0 ? 'the tools' : 'they'} stay held`);
    process.exitCode = EXIT.refused;
    return;
  }
  // Bound to the version shown and to each definition shown (its digest): anything else makes it APPROVAL_STALE.
  const lines: string[] = [];
  if (tools.length > 0) {
    const reviewed = tools.map((t) => ({ name: t.name, digest: t.digest }));
    const accepted = await client.call('tools.accept', { serviceId: service.id, toolListVersion: first.toolListVersion, tools: reviewed });
    lines.push(`accepted ${accepted.accepted.length} tool${accepted.accepted.length === 1 ? '' : 's'} of ${clean(service.name)}: callable from now, offered to models from their next task`);
  }
  if (offers.length > 0) {
    const accepted = await client.call('offers.accept', { serviceId: service.id, items: offers.map((o) => ({ kind: o.kind, name: o.name, digest: o.digest })) });
    lines.push(`accepted ${accepted.accepted.length} prompt${accepted.accepted.length === 1 ? '' : 's'} or template${accepted.accepted.length === 1 ? '' : 's'} of ${clean(service.name)}: offered to MCP clients from now`);
  }
  ctx.print({ service: { id: service.id, name: service.name } }, () => lines.join('\n'));
}

/** The width to fit the review to: the terminal's, when stdout is one. */
function stdoutColumns(): number | undefined {
  return process.stdout.isTTY ? process.stdout.columns : undefined;
}

/** Every page of the review, all at the version of the first (a change meanwhile makes the accept stale anyway). */
async function allHeld(client: WispClient, serviceId: string, first: Review): Promise<Review['tools']> {
  const tools = [...first.tools];
  let cursor = first.nextCursor;
  while (cursor !== null) {
    const page = await client.call('tools.review', { serviceId, cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  }
  return tools;
}
