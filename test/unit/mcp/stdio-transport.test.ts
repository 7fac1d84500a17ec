import { describe, expect, it } from 'vitest';
import { StderrTail } from '../../../src/mcp/stderr-tail.js';
import { StdioTransport } from '../../../src/mcp/stdio-transport.js';

/** A real child that writes `lines` to stdout, then waits on stdin. */
function transportWriting(lines: string[]): StdioTransport {
  const script = `for (const line of ${JSON.stringify(lines)}) process.stdout.write(line + '\\n'); process.stdin.resume();`;
  return new StdioTransport(
    { command: process.execPath, args: ['-e', script], cwd: undefined, env: {} },
    { maxFrameBytes: 1024 * 1024, maxFrameNesting: 512, ladder: { stdinGraceMs: 200, termGraceMs: 200 }, stderr: new StderrTail(4096) },
  );
}

function closed(transport: StdioTransport): Promise<void> {
  return new Promise((resolve) => (transport.onclose = resolve));
}

describe('StdioTransport', () => {
  it('a throw out of the message handler fails this transport with the reason, and the process goes on', async () => {
    const transport = transportWriting(['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}']);
    const ended = closed(transport);
    transport.onmessage = () => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    await transport.start();
    await ended;
    expect(transport.failure).toEqual({ code: 'PROTOCOL_ERROR', message: "the server's message could not be handled: Maximum call stack size exceeded" });
  });

  it('a frame nesting deeper than its cap is refused unparsed; the messages before it were delivered', async () => {
    const deep = `{"jsonrpc":"2.0","method":"m","params":{"x":${'['.repeat(600)}${']'.repeat(600)}}}`;
    const transport = transportWriting(['{"jsonrpc":"2.0","method":"first"}', deep, '{"jsonrpc":"2.0","method":"after"}']);
    const ended = closed(transport);
    const seen: unknown[] = [];
    transport.onmessage = (message) => void seen.push((message as { method?: string }).method);
    await transport.start();
    await ended;
    expect(seen).toEqual(['first']);
    expect(transport.failure).toEqual({ code: 'PROTOCOL_ERROR', message: 'the server sent a message nested more than 512 levels deep' });
  });
});
