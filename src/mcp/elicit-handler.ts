import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitAnswer, ElicitRequest } from './elicitations.js';

/** How a connection puts a server's elicitation/create before the user (the daemon's Elicitations, for one service). */
export interface ElicitSink {
  /** Whether some client can answer now: decides the capability declared at initialize. */
  available(): boolean;
  ask(request: ElicitRequest, signal: AbortSignal): Promise<ElicitAnswer>;
}

/**
 * The capabilities a client declares at initialize: elicitation (form and URL mode) only
 * when a client that can answer is attached then. A capability cannot be withdrawn later,
 * so a request that arrives when none is attached any more is answered cancel.
 */
export function clientCapabilities(sink: ElicitSink | undefined): ClientCapabilities {
  return sink?.available() === true ? { elicitation: { form: {}, url: {} } } : {};
}

/** Hands the server's elicitation requests to `sink` (the SDK checks their shape and the declared modes first). */
export function answerElicitations(client: Client, sink: ElicitSink | undefined, capabilities: ClientCapabilities): void {
  if (sink === undefined || capabilities.elicitation === undefined) return;
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => ({ ...(await sink.ask(request.params as ElicitRequest, extra.signal)) }));
}
