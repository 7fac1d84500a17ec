import { Transform, type TransformCallback } from 'node:stream';
import { LIMITS, NestingMeter } from '../core/index.js';

/**
 * The largest message the gateway takes from its MCP client (a stdio line, an HTTP body).
 * The daemon takes at most 1 MB per frame anyway, and a call's arguments at most 32 KB.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 2 * 1024 * 1024;

/** What a refused line is answered with: JSON-RPC's Invalid Request, id null (it was never parsed, so its id is unknown). */
export interface Refusal {
  readonly code: -32600;
  readonly message: string;
  readonly data: { readonly limit: 'maxFrameNesting' | 'maxMessageBytes'; readonly max: number };
}

/** The JSON-RPC error line for a refusal, as it is written to the client. */
export function refusalLine(refusal: Refusal): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id: null, error: refusal })}\n`;
}

/** The refusal of a message that nests deeper than `max` levels. */
export function tooDeep(max: number = LIMITS.maxFrameNesting): Refusal {
  return { code: -32600, message: `the message nests deeper than ${max} levels; it was not parsed`, data: { limit: 'maxFrameNesting', max } };
}

function tooLarge(max: number): Refusal {
  return { code: -32600, message: `the message is over ${max} bytes; it was not parsed`, data: { limit: 'maxMessageBytes', max } };
}

const NEWLINE = Buffer.from('\n');

/**
 * The gateway's stdin, line by line, before the SDK's stdio transport parses a line: a line
 * nesting deeper than LIMITS.maxFrameNesting, or longer than MAX_CLIENT_MESSAGE_BYTES, is
 * refused on its text, as the daemon refuses its own clients' frames
 * (control/rpc-connection.ts): never parsed, never held whole (the rest of it is skipped as
 * it arrives), and answered through `refuse`. Every other line passes on unchanged.
 *
 * Why: the SDK parses each line whole and hands it to code that may recurse or
 * JSON.stringify it (an "unknown message id" error quotes the whole message), so a frame of
 * a few MB nested a million deep costs seconds and could throw where nothing catches it.
 */
export class FrameGuard extends Transform {
  private readonly meter: NestingMeter;
  private lineParts: Buffer[] = [];
  private lineBytes = 0;
  private lineRefused: Refusal | null = null;

  constructor(
    private readonly refuse: (refusal: Refusal) => void,
    private readonly limits: { readonly maxNesting: number; readonly maxBytes: number } = { maxNesting: LIMITS.maxFrameNesting, maxBytes: MAX_CLIENT_MESSAGE_BYTES },
  ) {
    super();
    this.meter = new NestingMeter(limits.maxNesting);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (this.lineRefused === null) this.measure(piece);
      if (newline === -1) break;
      this.endLine();
      start = newline + 1;
    }
    done();
  }

  /** A line cut off by the end of stdin is passed on as it is (the SDK waits for its newline, as it would have). */
  override _flush(done: TransformCallback): void {
    if (this.lineRefused === null && this.lineBytes > 0) this.push(Buffer.concat(this.lineParts));
    done();
  }

  private measure(piece: Buffer): void {
    if (this.lineBytes + piece.length > this.limits.maxBytes) this.lineRefused = tooLarge(this.limits.maxBytes);
    else if (this.meter.push(piece)) this.lineRefused = tooDeep(this.limits.maxNesting);
    if (this.lineRefused !== null) {
      this.lineParts = [];
      this.lineBytes = 0;
      return;
    }
    // Copied: the chunk it is cut from may be a pooled buffer.
    this.lineParts.push(Buffer.from(piece));
    this.lineBytes += piece.length;
  }

  private endLine(): void {
    const refused = this.lineRefused;
    if (refused !== null) this.refuse(refused);
    else this.push(Buffer.concat([...this.lineParts, NEWLINE]));
    this.lineParts = [];
    this.lineBytes = 0;
    this.lineRefused = null;
    this.meter.reset();
  }
}
