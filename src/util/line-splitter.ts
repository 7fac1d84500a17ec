/**
 * Splits a byte stream into newline-delimited frames with an exact per-frame byte cap.
 *
 * Our own rather than `readline` or the SDK's ReadBuffer: those buffer an unbounded line
 * (or cap total buffered bytes, not one frame), so a peer that never sends a newline
 * could grow our memory without limit. Here at most `maxFrameBytes` are ever held.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private overflowed = false;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
    private readonly onOverflow: (bytesSeen: number) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (this.size + piece.length > this.maxFrameBytes) {
        this.overflowed = true;
        const seen = this.size + piece.length;
        this.parts = [];
        this.size = 0;
        this.onOverflow(seen);
        return;
      }
      if (newline === -1) {
        this.parts.push(Buffer.from(piece));
        this.size += piece.length;
        return;
      }
      const frame = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      this.parts = [];
      this.size = 0;
      this.onFrame(stripCarriageReturn(frame));
      start = newline + 1;
    }
  }

  /** Bytes of an unfinished frame still held. */
  get pendingBytes(): number {
    return this.size;
  }
}

function stripCarriageReturn(frame: Buffer): Buffer {
  return frame.length > 0 && frame[frame.length - 1] === 0x0d ? frame.subarray(0, frame.length - 1) : frame;
}
