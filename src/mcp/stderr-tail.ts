/**
 * The last few kilobytes a server wrote to stderr, kept in memory only (never written to
 * disk or the daemon log) for `wispctl mcp logs`. Memory stays bounded whatever the
 * server writes.
 */
export class StderrTail {
  private chunks: string[] = [];
  private size = 0;
  private dropped = 0;

  constructor(
    private readonly maxChars: number,
    private readonly redact: (text: string) => string = (text) => text,
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

  /** Complete lines only; the first may be cut when older output was dropped. */
  snapshot(): { text: string; droppedChars: number } {
    return { text: this.redact(this.chunks.join('')), droppedChars: this.dropped };
  }
}
