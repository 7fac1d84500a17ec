import { createInterface, type Interface } from 'node:readline/promises';
import type { WispClient } from '../control/client.js';
import { WispError, type Approval } from '../core/index.js';
import { approvalQuestion, errorLine, waitingText, withdrawnText } from './render.js';

/**
 * Every question wispctl asks a human: y/N, secret values, and the answer to an approval.
 * A prompt left without an answer (Ctrl-C, or the end of input) ends the same way
 * everywhere: PromptCancelled, which the command turns into one line, `cancelled`, on
 * stderr and exit status 130; an approval being asked about is first cancelled at the
 * daemon, so it never stays pending behind a CLI that has gone.
 */

export { CANCELLED, EXIT_INTERRUPTED, PromptCancelled } from './cancelled.js';
import { PromptCancelled } from './cancelled.js';
import { stdin, stdinIsTerminal } from './stdin.js';

/** y, Y, yes, YES... ; anything else (an empty line included) is no. */
function isYes(answer: string): boolean {
  return /^y(es)?$/i.test(answer.trim());
}

/**
 * One readline on stdin/stderr that asks questions and routes Ctrl-C: with a question
 * pending, Ctrl-C cancels that question (PromptCancelled); with none, it calls the handler
 * given to onInterrupt (chat: cancel the running request). The chat keeps one for its whole
 * loop, so its own prompt and the approval questions share the terminal.
 */
export class Prompter {
  private readonly rl: Interface;
  private readonly closed: Promise<void>;
  private pending: { readonly controller: AbortController; interrupted: boolean } | null = null;
  private idle: () => void = () => undefined;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(options: { terminal?: boolean } = {}) {
    this.rl = createInterface({ input: stdin(), output: process.stderr, ...(options.terminal !== undefined ? { terminal: options.terminal } : {}) });
    this.closed = new Promise((resolve) => this.rl.once('close', () => resolve()));
    // A listener must exist, or readline would close itself on Ctrl-C.
    // Decided on the next turn, not at once: a Ctrl-C read in the same chunk as the Enter that
    // answered the question comes before that answer has settled here, and it belongs to what
    // runs next (the request just sent), never to the question already answered.
    this.rl.on('SIGINT', () => {
      setImmediate(() => {
        if (this.pending === null) {
          this.idle();
          return;
        }
        this.pending.interrupted = true;
        this.pending.controller.abort();
      });
    });
  }

  /** What Ctrl-C does while no question is pending. */
  onInterrupt(handler: () => void): void {
    this.idle = handler;
  }

  /**
   * The line typed; PromptCancelled on Ctrl-C or the end of input. When `withdraw` aborts
   * (the question no longer applies), its reason is thrown instead. Questions asked while
   * one is pending wait their turn.
   */
  ask(question: string, withdraw?: AbortSignal): Promise<string> {
    const mine = this.turn.then(() => this.askNow(question, withdraw));
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  private async askNow(question: string, withdraw?: AbortSignal): Promise<string> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(withdraw?.reason);
    withdraw?.addEventListener('abort', forward, { once: true });
    if (withdraw?.aborted === true) forward();
    const pending = { controller, interrupted: false };
    this.pending = pending;
    try {
      // A closed readline may leave the question unsettled: the close ends it too.
      const ended = this.closed.then(() => Promise.reject(new PromptCancelled('eof')));
      return await Promise.race([this.rl.question(question, { signal: controller.signal }), ended]);
    } catch {
      if (pending.interrupted) {
        process.stderr.write('\n');
        throw new PromptCancelled('interrupt');
      }
      if (withdraw?.aborted === true) throw withdraw.reason;
      throw new PromptCancelled('eof');
    } finally {
      this.pending = null;
      withdraw?.removeEventListener('abort', forward);
    }
  }

  /** A y/N question: true only for y or yes. */
  async confirm(question: string, withdraw?: AbortSignal): Promise<boolean> {
    return isYes(await this.ask(question, withdraw));
  }

  close(): void {
    this.rl.close();
  }
}

/**
 * A y/N question on the terminal (its own readline, closed after). Without a terminal nobody
 * can confirm: INVALID_PARAMS with `noTerminal`, which says how to go without asking.
 */
export async function confirm(question: string, noTerminal: string): Promise<boolean> {
  if (!stdinIsTerminal()) throw new WispError('INVALID_PARAMS', noTerminal);
  const prompter = new Prompter();
  try {
    return await prompter.confirm(question);
  } finally {
    prompter.close();
  }
}

/**
 * Reads a secret value: from a terminal without echo, or from stdin when piped. Never from
 * argv, where it would land in shell history and in every process listing. Ctrl-C or Ctrl-D
 * at the terminal: PromptCancelled.
 */
export async function readSecret(prompt: string, write: (text: string) => void): Promise<string> {
  const input = stdin();
  if (!input.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  write(prompt);
  input.setRawMode(true);
  input.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: Buffer): void => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n' || ch === '\u0003' || ch === '\u0004') {
            input.off('data', onData);
            write('\n');
            if (ch === '\r' || ch === '\n') resolve(value);
            else reject(new PromptCancelled(ch === '\u0003' ? 'interrupt' : 'eof'));
            return;
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else value += ch;
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
  }
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * How a command ends when a prompt inside it is cancelled while it waits on something else
 * (the tool call or install the approval belongs to). interrupt() starts the daemon-side
 * cancel; guard(work) then ends with PromptCancelled once that cancel is done, whatever the
 * work does meanwhile (its APPROVAL_DENIED or CANCELLED is the cancel's own echo, not news).
 */
export class Interruption {
  private cleanup: Promise<unknown> | undefined;
  private wake: () => void = () => undefined;
  private readonly woken = new Promise<void>((resolve) => (this.wake = resolve));

  get interrupted(): boolean {
    return this.cleanup !== undefined;
  }

  interrupt(cleanup: Promise<unknown>): void {
    if (this.cleanup !== undefined) return;
    this.cleanup = cleanup.catch(() => undefined);
    this.wake();
  }

  async guard<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      (value): Settled<T> => ({ ok: true, value }),
      (error: unknown): Settled<T> => ({ ok: false, error }),
    );
    const first = await Promise.race([settled, this.woken.then(() => undefined)]);
    if (this.cleanup !== undefined || first === undefined) {
      await this.cleanup;
      throw new PromptCancelled('interrupt');
    }
    if (!first.ok) throw first.error;
    return first.value;
  }
}

export interface ApprovalAnswer {
  readonly client: WispClient;
  readonly err: (line: string) => void;
  /** ask: y/N on this terminal; wait: say how any client may answer; approve: --yes. */
  readonly mode: 'ask' | 'wait' | 'approve';
  /** Where a cancelled question goes: the command ends once `cancel` is done at the daemon. */
  readonly interruption: Interruption;
  /** The daemon-side cancel on Ctrl-C (default: deny the approval, so the call it guards ends). */
  readonly cancel?: (approval: Approval) => Promise<unknown>;
  /** The question (default: approvalQuestion, which names the registered tool). */
  readonly question?: string;
  /** The chat's prompter; otherwise one of its own on stdin/stderr, closed after. */
  readonly prompter?: Prompter;
}

function respond(options: ApprovalAnswer, approval: Approval, decision: 'approve' | 'deny'): Promise<void> {
  return options.client.call('approvals.respond', { id: approval.id, decision }).then(
    () => undefined,
    (error: unknown) => options.err(errorLine(error)),
  );
}

/**
 * Answers one approval: approves it (--yes), says who may answer it (no terminal), or asks
 * y/N and sends the answer. The question is withdrawn as soon as the approval is resolved
 * some other way (answered by another client, cancelled, made stale by a tool-list change or
 * a disable): an answer typed afterwards must never be taken for a different approval.
 */
export function answerApproval(approval: Approval, options: ApprovalAnswer): void {
  if (options.mode === 'approve') {
    void respond(options, approval, 'approve');
    return;
  }
  if (options.mode === 'wait') {
    options.err(waitingText(approval));
    return;
  }
  const withdrawn = new AbortController();
  const off = options.client.onEvent((event) => {
    if (event.type !== 'approval.resolved' || event.approval.id !== approval.id || withdrawn.signal.aborted) return;
    withdrawn.abort();
    options.err(withdrawnText(event.approval));
  });
  const prompter = options.prompter ?? new Prompter();
  const done = (): void => {
    off();
    if (options.prompter === undefined) prompter.close();
  };
  prompter.confirm(options.question ?? approvalQuestion(approval), withdrawn.signal).then(
    (yes) => {
      done();
      return respond(options, approval, yes ? 'approve' : 'deny');
    },
    (error: unknown) => {
      done();
      if (!(error instanceof PromptCancelled)) return; // withdrawn: already said so
      const cancel = options.cancel ?? ((a: Approval) => options.client.call('approvals.respond', { id: a.id, decision: 'deny' }));
      options.interruption.interrupt(cancel(approval));
    },
  );
}
