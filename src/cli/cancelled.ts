/* How a cancelled command ends: here, not in prompt.ts, so that main.ts can say it without loading readline. */

/** The exit status of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it. */
export const EXIT_INTERRUPTED = 130;

/** The one line a cancelled prompt leaves on stderr. */
export const CANCELLED = 'cancelled';

/** A prompt left without an answer: Ctrl-C (`interrupt`) or the end of input, Ctrl-D (`eof`). */
export class PromptCancelled extends Error {
  constructor(readonly how: 'interrupt' | 'eof') {
    super(CANCELLED);
    this.name = 'PromptCancelled';
  }
}
