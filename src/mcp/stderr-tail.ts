/**
 * The last few kilobytes a server wrote to stderr, kept in memory only (never written to
 * disk or the daemon log) for `wispctl mcp logs`. Memory stays bounded whatever the
 * server writes.
 */
export type Redact = (text: string, edges?: { start?: boolean; end?: boolean }) => string;

export class StderrTail {
  private chunks: string[] = [];
  private size = 0;
  private dropped = 0;

  constructor(
    private readonly maxChars: number,
    /** With `edges`: the text was cut there, and a piece of a secret at a cut is redacted too. */
    private readonly redact: Redact = (text) => text,
  ) {}

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.maxChars && this.chunks.length > 0) {
      const head = this.chunks[0] ?? '';
      const excess = this.size - this.maxChars;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
        this.dropped += head.length;
      } else {
        this.chunks[0] = head.slice(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }

  /**
   * Redacted as a whole, then at its edges: where older output was dropped (the first
   * line may begin inside a secret) and at the end (a secret may be half written).
   */
  snapshot(): { text: string; droppedChars: number } {
    return { text: this.redact(this.chunks.join(''), { start: this.dropped > 0, end: true }), droppedChars: this.dropped };
  }
}
