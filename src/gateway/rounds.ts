import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { createRequestStateCodec, inputRequired, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import { WispError, type Approval } from '../core/index.js';
import { approvalQuestion, decisionOf } from './approval-question.js';
import type { Extra } from './client-requests.js';
import { failureResult } from './result.js';

/** How long a call offered to its client stays open for the client's answer; past it the call is cancelled at the daemon (the approval goes with it). */
export const ROUND_TIMEOUT_MS = 10 * 60_000;
/** At most this many calls of one gateway wait for their client's answer at once; past it an approval is answered in Wisp only. */
export const MAX_OPEN_ROUNDS = 32;
/** The key of the one input request a call's round carries. */
const KEY = 'wisp-approval';

/** A call whose approval went to its 2026 client as `input_required`, until the client retries it. */
interface OpenRound {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly approval: Approval;
  /** The call at the daemon: its result, or its failure as a tool result (never rejects). */
  readonly result: Promise<CallToolResult>;
  /** Cancels the call at the daemon. */
  readonly cancel: (why: string) => void;
  /** Points the call's progress at the request that now waits for it. */
  readonly attach: (extra: Extra) => void;
  readonly timer: NodeJS.Timeout;
}

/** What a new 2026 call hands to `offer` once the daemon asked a human about it. */
export interface RoundCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly result: Promise<CallToolResult>;
  readonly cancel: (why: string) => void;
  readonly attach: (extra: Extra) => void;
}

/**
 * Approvals offered to 2026-07-28 clients (`--approve-in-client`). That revision has no
 * server-to-client request: a call's approval goes back as the call's own answer, an
 * `input_required` result carrying the question (an elicitation, worded as a 2025 client's) and
 * a `requestState`; the client asks its user and sends the same call again with the answer
 * (`inputResponses`) and the state. The call itself keeps waiting at the daemon meanwhile, and
 * the retry then waits for its result, exactly as a 2025 call waits for its elicitation.
 *
 * What holds it to what was shown: the state is sealed by the SDK's HMAC codec under a key this
 * gateway process made (a client cannot forge or alter it, and it expires with the round), bound
 * to the method; it names one open round by a random token, used once; the retry must carry the
 * same tool and the same arguments, or nothing is answered; the first answer wins at the daemon
 * (approvals.respond), so an answer in Wisp meanwhile stands. A round the client never comes
 * back to is cancelled after ROUND_TIMEOUT_MS: nothing runs after its client stopped waiting.
 * One instance serves a gateway connection (stdio) or every request of a stateless HTTP gateway.
 */
export class Rounds {
  private readonly open = new Map<string, OpenRound>();
  private readonly codec = createRequestStateCodec<{ round: string }>({
    key: randomBytes(32),
    ttlSeconds: ROUND_TIMEOUT_MS / 1000,
    bind: (ctx) => ctx.mcpReq.method,
  });

  /** For the server's options (`requestState.verify`): a state that is not ours, altered or expired is refused by the SDK (-32602) before any handler runs. */
  readonly verify = (state: string, ctx: ServerContext): Promise<{ round: string }> => this.codec.verify(state, ctx);

  /** Whether another round can be opened now. */
  get full(): boolean {
    return this.open.size >= MAX_OPEN_ROUNDS;
  }

  /** The call's approval as the answer to its request: the question, and the state its retry must carry. */
  async offer(call: RoundCall, approval: Approval, ctx: ServerContext): Promise<InputRequiredResult | undefined> {
    const question = approvalQuestion(approval);
    if (question === undefined || this.full) return undefined;
    const token = randomBytes(16).toString('hex');
    const timer = setTimeout(() => this.expire(token), ROUND_TIMEOUT_MS);
    timer.unref();
    this.open.set(token, { ...call, approval, timer });
    const requestState = await this.codec.mint({ round: token }, ctx);
    return inputRequired({ inputRequests: { [KEY]: inputRequired.elicit(question) }, requestState });
  }

  /**
   * The retry of a call offered as `input_required`: its answer goes to the daemon as the
   * approval's decision (decline is deny; cancel, or no answer, leaves it waiting in Wisp), then
   * the retry waits for the call's result. A retry of another tool, with other arguments, or of a
   * round already over is refused and answers nothing.
   */
  async resume(state: { round: string } | undefined, name: string, args: Record<string, unknown>, ctx: ServerContext, extra: Extra, respond: (id: string, decision: 'approve' | 'deny') => Promise<unknown>): Promise<CallToolResult> {
    const round = typeof state?.round === 'string' ? this.open.get(state.round) : undefined;
    if (round === undefined || state === undefined) {
      return failureResult(new WispError('APPROVAL_NOT_PENDING', 'this call was offered for approval once, and that round is over (answered, cancelled or expired): call the tool again'));
    }
    if (round.name !== name || !isDeepStrictEqual(round.args, args)) {
      return failureResult(new WispError('APPROVAL_STALE', 'the retry does not carry the tool call that was shown for approval (another tool, or other arguments): nothing was answered'));
    }
    this.open.delete(state.round);
    clearTimeout(round.timer);
    const decision = decisionOf(ctx.mcpReq.inputResponses?.[KEY]);
    // Another client may have answered first: then this answer is refused (APPROVAL_NOT_PENDING) and ignored.
    if (decision !== undefined) await respond(round.approval.id, decision).catch(() => undefined);
    round.attach(extra);
    const onAbort = (): void => round.cancel('the MCP client cancelled the call');
    extra.signal.addEventListener('abort', onAbort, { once: true });
    if (extra.signal.aborted) onAbort();
    try {
      return await round.result;
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Every open round's call is cancelled (the gateway closes). */
  close(): void {
    for (const token of [...this.open.keys()]) this.expire(token, 'the MCP gateway closed');
  }

  private expire(token: string, why = 'the MCP client did not answer its approval in time'): void {
    const round = this.open.get(token);
    if (round === undefined) return;
    this.open.delete(token);
    clearTimeout(round.timer);
    round.cancel(why);
  }
}

/**
 * The Extra of a call that outlives the request that started it (a 2026 round): its progress and
 * notices go to the request that waits for it now (the first one, then none while the client
 * answers, then the retry); its cancellation is the call's own (`signal`).
 */
export function movableExtra(first: Extra, signal: AbortSignal): { extra: Extra; attach: (next: Extra | null) => void } {
  let current: Extra | null = first;
  const extra: Extra = {
    signal,
    modern: true,
    get progressToken() {
      return current?.progressToken;
    },
    sendNotification: (notification) => current?.sendNotification(notification) ?? Promise.resolve(),
    elicit: () => Promise.reject(new Error('a 2026-07-28 client is sent no request')),
    ping: () => Promise.resolve(),
  };
  return { extra, attach: (next) => (current = next) };
}
