/**
 * What a splitter may hold of unfinished frames, shared with other splitters (the control
 * socket's one budget across every connection): asked before each piece is held, told when
 * held bytes are let go.
 */
export interface FrameBudget {
  /** Whether `bytes` more may be held (and if so they count from now on). */
  take(bytes: number): boolean;
  give(bytes: number): void;
}

/** Why a splitter stopped: its frame passed the per-frame cap, or the shared budget had no room for it. */
export type OverflowReason = 'frame' | 'budget';

/**
 * Splits a byte stream into newline-delimited frames with an exact per-frame byte cap.
 *
 * Our own rather than `readline` or the SDK's ReadBuffer: those buffer an unbounded line
 * (or cap total buffered bytes, not one frame), so a peer that never sends a newline
 * could grow our memory without limit. Here at most `maxFrameBytes` are ever held, and
 * with a budget no more than it allows across every splitter that shares it.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private overflowed = false;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
    private readonly onOverflow: (bytesSeen: number, reason: OverflowReason) => void,
    private readonly budget?: FrameBudget,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (this.size + piece.length > this.maxFrameBytes) {
        this.stop(this.size + piece.length, 'frame');
        return;
      }
      if (newline === -1) {
        if (this.budget !== undefined && !this.budget.take(piece.length)) {
          this.stop(this.size + piece.length, 'budget');
          return;
        }
        this.parts.push(Buffer.from(piece));
        this.size += piece.length;
        return;
      }
      const frame = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      this.release();
      this.onFrame(stripCarriageReturn(frame));
      start = newline + 1;
    }
  }

  /** Bytes of an unfinished frame still held. */
  get pendingBytes(): number {
    return this.size;
  }

  /** Lets go of an unfinished frame and takes nothing more (its stream ended): what it held is given back to the budget. */
  dispose(): void {
    this.overflowed = true;
    this.release();
  }

  private stop(seen: number, reason: OverflowReason): void {
    this.overflowed = true;
    this.release();
    this.onOverflow(seen, reason);
  }

  /** Drops the held pieces (nothing else refers to them) and gives their bytes back. */
  private release(): void {
    if (this.size > 0) this.budget?.give(this.size);
    this.parts = [];
    this.size = 0;
  }
}

function stripCarriageReturn(frame: Buffer): Buffer {
  return frame.length > 0 && frame[frame.length - 1] === 0x0d ? frame.subarray(0, frame.length - 1) : frame;
}
