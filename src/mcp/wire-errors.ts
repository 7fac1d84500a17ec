import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, type McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC errors a server sent, seen on the wire before the SDK turns them into an
 * McpError: an McpError is the server's answer only if it is here. The SDK's own errors
 * (its request timeout, the connection closing) use the same codes but never pass here.
 * Also notes the transport under the current client closing (what the SDK then rejects with
 * is local). One per connection (connection.ts).
 */
export class WireErrors {
  private readonly seen: string[] = [];
  private observed: Transport | undefined;
  /** The transport under the current client closed. */
  lost = false;

  /** Notes each JSON-RPC error response as it arrives (the SDK calls a handler set before it connects first), and the transport closing. */
  observe(transport: Transport): void {
    this.lost = false;
    this.observed = transport;
    transport.onmessage = (message) => {
      // Most messages are results: only a message with an error is checked as one.
      if (!('error' in message) || !isJSONRPCErrorResponse(message)) return;
      this.seen.push(remoteKey(message.error.code, message.error.message));
      if (this.seen.length > 64) this.seen.shift();
    };
    transport.onclose = () => {
      if (this.observed === transport) this.lost = true;
    };
  }

  /** Whether an McpError is a server's JSON-RPC error (seen on the wire), consuming the note. */
  fromServer(error: McpError): boolean {
    const prefix = `MCP error ${error.code}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    const at = this.seen.indexOf(remoteKey(error.code, message));
    if (at === -1) return false;
    this.seen.splice(at, 1);
    return true;
  }
}

function remoteKey(code: number, message: string): string {
  return `${code}\u0000${message}`;
}
