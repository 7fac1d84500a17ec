import type { WispClient } from '../control/client.js';
import { EXIT, WispError, type Approval, type ApprovalOutcome } from '../core/index.js';
import { EXIT_INTERRUPTED } from './cancelled.js';
import type { CliContext } from './context.js';
import { allApprovals } from './ids.js';
import { PromptCancelled, Prompter } from './prompt.js';
import { approvalQuestion, approvalStateLine, clean, describeApproval, errorLine, fitToTerminal, jsonForTerminal, stderrColumns, withdrawnText } from './render.js';
import { stdinIsTerminal } from './stdin.js';

/**
 * `wispctl approvals --watch`: one terminal answering for a model (or a script) working
 * elsewhere. Every pending approval, those open at the start and each one as it is asked,
 * is shown and asked y/N, one at a time, oldest first. One answered elsewhere while it is
 * asked here is reported and skipped; one answered before its turn is dropped unasked.
 *
 * Ctrl-C (or Ctrl-D) stops the console and leaves the approval being asked PENDING: the
 * request belongs to whoever made it (a task, a command elsewhere), not to this console, so
 * stopping watching must not refuse it. It is named on the way out, with how to answer it.
 */

type Stop = { readonly how: 'interrupt' | 'eof' | 'daemon' };

class Withdrawn extends Error {
  constructor(readonly outcome: ApprovalOutcome) {
    super('withdrawn');
  }
}

/** The approvals still to ask, in order, each asked at most once. */
class Queue {
  private readonly items: Approval[] = [];
  private readonly seen = new Set<string>();
  private wake: () => void = () => undefined;

  add(approval: Approval): void {
    if (approval.state.status !== 'pending' || this.seen.has(approval.id)) return;
    this.seen.add(approval.id);
    this.items.push(approval);
    this.items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    this.wake();
  }

  drop(id: string): void {
    this.seen.add(id);
    const at = this.items.findIndex((a) => a.id === id);
    if (at !== -1) this.items.splice(at, 1);
  }

  /** The next approval, once there is one. */
  async next(): Promise<Approval> {
    for (;;) {
      const first = this.items.shift();
      if (first !== undefined) return first;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  get empty(): boolean {
    return this.items.length === 0;
  }
}

/** Asks one approval; its answer is sent, or it is withdrawn (answered elsewhere), or the console stops. */
async function askOne(client: WispClient, ctx: CliContext, prompter: Prompter, approval: Approval, withdraw: AbortSignal): Promise<void> {
  ctx.io.err(fitToTerminal(`\n${describeApproval(approval)}`, stderrColumns()));
  let yes: boolean;
  try {
    yes = await prompter.confirm(approvalQuestion(approval), withdraw);
  } catch (error) {
    if (error instanceof Withdrawn) {
      ctx.io.err(withdrawnText(error.outcome).trimStart());
      return;
    }
    throw error;
  }
  try {
    const { approval: answered } = await client.call('approvals.respond', { id: approval.id, decision: yes ? 'approve' : 'deny' });
    ctx.io.out(ctx.json() ? jsonForTerminal(answered) : approvalStateLine(answered));
  } catch (error) {
    // Answered elsewhere between the keypress and ours: the daemon's APPROVAL_NOT_PENDING, said once.
    ctx.io.err(errorLine(error));
  }
}

export async function watchApprovals(client: WispClient, ctx: CliContext): Promise<void> {
  if (!stdinIsTerminal()) throw new WispError('INVALID_PARAMS', '--watch asks y/N on a terminal and stdin is not one: use wispctl approvals, then wispctl approve ID or deny ID');
  const queue = new Queue();
  let current: { id: string; withdraw: AbortController } | null = null;
  let stop: (how: Stop) => void = () => undefined;
  const stopped = new Promise<Stop>((resolve) => (stop = resolve));
  client.onEvent((event) => {
    if (event.type === 'approval.requested') queue.add(event.approval);
    if (event.type !== 'approval.resolved') return;
    queue.drop(event.approval.id);
    if (current?.id === event.approval.id) current.withdraw.abort(new Withdrawn(event.approval));
  });
  client.onClose(() => {
    current?.withdraw.abort(new PromptCancelled('eof'));
    stop({ how: 'daemon' });
  });
  // Subscribed first, listed second: nothing asked in between is missed (the queue drops repeats).
  await client.call('events.subscribe', {});
  for (const approval of await allApprovals(client, false)) queue.add(approval);
  const prompter = new Prompter();
  prompter.onInterrupt(() => stop({ how: 'interrupt' }));
  try {
    const end = await serve(client, ctx, prompter, queue, stopped, (c) => (current = c));
    finish(ctx, end.stop, end.pending);
  } finally {
    prompter.close();
  }
}

/** The loop: wait for the next approval (or the end), ask it. Resolves with how it ended and what was left asked. */
async function serve(
  client: WispClient,
  ctx: CliContext,
  prompter: Prompter,
  queue: Queue,
  stopped: Promise<Stop>,
  setCurrent: (current: { id: string; withdraw: AbortController } | null) => void,
): Promise<{ stop: Stop; pending: Approval | null }> {
  for (;;) {
    if (queue.empty) ctx.io.err('waiting for approvals (Ctrl-C stops; an approval being asked stays pending)');
    const next = await Promise.race([queue.next(), stopped]);
    if (!('id' in next)) return { stop: next, pending: null };
    const withdraw = new AbortController();
    setCurrent({ id: next.id, withdraw });
    try {
      await askOne(client, ctx, prompter, next, withdraw.signal);
    } catch (error) {
      if (!(error instanceof PromptCancelled)) throw error;
      const how = await Promise.race([stopped, Promise.resolve<Stop>({ how: error.how })]);
      return { stop: how, pending: next };
    } finally {
      setCurrent(null);
    }
  }
}

function finish(ctx: CliContext, stop: Stop, pending: Approval | null): void {
  const left = pending !== null ? `; approval ${clean(pending.id)} is still pending (wispctl approve ${clean(pending.id)}, or deny)` : '';
  if (stop.how === 'daemon') {
    ctx.io.err(`the daemon closed the connection${left}`);
    process.exitCode = EXIT.noDaemon;
    return;
  }
  ctx.io.err(`stopped watching${left}`);
  process.exitCode = stop.how === 'interrupt' ? EXIT_INTERRUPTED : EXIT.ok;
}
