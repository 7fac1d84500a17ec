/**
 * Whether `value` nests objects and arrays more than `max` levels deep (`{}` and `[]` are one
 * level, `{"a":[1]}` two, a scalar none). Iterative, so a value a million levels deep is
 * measured without touching the call stack; stops at the first node past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: { node: object; depth: number }[] = [{ node: value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > max) return true;
    const children: unknown[] = Array.isArray(top.node) ? top.node : Object.values(top.node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: top.depth + 1 });
    }
  }
  return false;
}

/**
 * How deep the JSON text in `bytes` nests, measured on the bytes without parsing (strings
 * and their escapes skipped), stopping as soon as it passes `max`. Parsing a frame of a
 * million brackets costs V8 some 100 ms and a burst of garbage; this scan costs a few
 * milliseconds per megabyte, so a frame that deep is refused before it is parsed.
 */
export function textNestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  // Each level opens with a byte of its own: a text no longer than `max` cannot nest deeper (every call's frames).
  if (bytes.length <= max) return false;
  return new NestingMeter(max).push(bytes);
}

/**
 * The same measure over text that arrives in pieces (a remote server's response body as it
 * streams): `push` each chunk, true once the text so far has passed `max`; `reset` between
 * messages (an SSE event). Strings and escapes that straddle two chunks are followed.
 *
 * The depth never goes below zero: closers with nothing open make the text invalid JSON, which
 * a parser refuses there, before anything after it; counting them would let a text lower the
 * count (over lines that are not parsed, say) and then open that many levels unseen.
 */
export class NestingMeter {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly max: number) {}

  push(bytes: Uint8Array): boolean {
    let { depth, inString, escaped } = this;
    const max = this.max;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (escaped) escaped = false;
      else if (inString) {
        if (b === 0x5c) escaped = true; // backslash: the next byte is escaped
        else if (b === 0x22) inString = false;
      } else if (b === 0x22) inString = true;
      else if (b === 0x5b || b === 0x7b) {
        depth += 1;
        if (depth > max) {
          this.depth = depth;
          return true;
        }
      } else if ((b === 0x5d || b === 0x7d) && depth > 0) depth -= 1;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return false;
  }

  /**
   * A line ended (SSE): a string open across a line break is no JSON string (a raw newline
   * is refused by every parser there), so what follows is measured as outside one. Without
   * this, one `"` on a line of its own made the rest of the event look like string text.
   */
  endLine(): void {
    this.inString = false;
    this.escaped = false;
  }

  reset(): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
  }
}
