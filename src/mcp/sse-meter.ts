import { NestingMeter } from '../util/index.js';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
/** Fields the SDK's SSE parser never hands to JSON.parse (a comment has an empty name). */
const UNPARSED_FIELDS = new Set(['', 'event', 'id', 'retry']);
/** A field name longer than this is none of UNPARSED_FIELDS: measured from there on. */
const LONGEST_UNPARSED = 5;

/**
 * The size and the nesting of each event of a server's SSE stream, as the bytes stream in,
 * before the SDK parses any of it. Written here, not taken from eventsource-parser: that
 * parser decodes and joins an event whole before anyone can measure it, and the point is to
 * refuse the event while it is still arriving.
 *
 * Nesting is measured on the lines whose text can reach JSON.parse: every line but comments
 * (`: ...`) and the `event`, `id` and `retry` fields, so a comment such as `: "` cannot make
 * the meter take the data after it for string text. Anything else (`data`, an unknown field,
 * a name with a byte-order mark before it) is measured whole, the stricter reading. Lines end
 * at CRLF, LF or CR (the SSE spec's three); a blank line ends the event. A string never
 * continues past a line's end (see NestingMeter.endLine), and the depth of an event carries
 * over its lines, as its data lines are joined.
 */
export class SseEventMeter {
  private readonly nesting: NestingMeter;
  private bytes = 0;
  /** The current line: its field name so far (while `named` is false), or whether it is measured. */
  private field = '';
  private named = false;
  private measured = false;
  private lineEmpty = true;
  private afterCR = false;

  constructor(
    private readonly maxBytes: number,
    maxNesting: number,
  ) {
    this.nesting = new NestingMeter(maxNesting);
  }

  /** Measures the next piece of the stream: `size` once the event being read is over maxBytes, `nesting` once it nests too deep. */
  push(chunk: Uint8Array): 'size' | 'nesting' | null {
    let i = 0;
    while (i < chunk.length) {
      const b = chunk[i] as number;
      if (b === LF || b === CR) {
        const crlf = b === LF && this.afterCR;
        this.afterCR = b === CR;
        this.bytes += 1;
        i += 1;
        if (!crlf) this.endLine();
      } else if (!this.named) {
        this.afterCR = false;
        this.lineEmpty = false;
        this.bytes += 1;
        i += 1;
        if (b === COLON || this.field.length >= LONGEST_UNPARSED) {
          this.named = true;
          this.measured = !(b === COLON && UNPARSED_FIELDS.has(this.field));
          // The name's own bytes, when the line is measured (a bracket in a name counts too).
          if (this.measured && this.nesting.push(Buffer.from(this.field + String.fromCharCode(b), 'latin1'))) return 'nesting';
        } else this.field += String.fromCharCode(b);
      } else {
        this.afterCR = false;
        let end = i;
        while (end < chunk.length && chunk[end] !== LF && chunk[end] !== CR) end += 1;
        if (this.measured && this.nesting.push(chunk.subarray(i, end))) return 'nesting';
        this.bytes += end - i;
        i = end;
      }
      if (this.bytes > this.maxBytes) return 'size';
    }
    return null;
  }

  private endLine(): void {
    if (this.lineEmpty) {
      // A blank line: the event is complete (dispatched, or dropped when it had no data).
      this.nesting.reset();
      this.bytes = 0;
    } else {
      // A line of a name alone (`data`) is a field with an empty value.
      if (!this.named && !UNPARSED_FIELDS.has(this.field)) this.nesting.push(Buffer.from(this.field, 'latin1'));
      this.nesting.endLine();
    }
    this.field = '';
    this.named = false;
    this.measured = false;
    this.lineEmpty = true;
  }
}
