import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitAnswer, ElicitRequest } from './elicitations.js';

/** How a connection puts a server's elicitation/create before the user (the daemon's Elicitations, for one service). */
export interface ElicitSink {
  ask(request: ElicitRequest, signal: AbortSignal): Promise<ElicitAnswer>;
}

/**
 * The capabilities a client declares at initialize: elicitation (form and URL mode) always,
 * whenever the daemon has somewhere to put requests, whether or not a client that could
 * answer is attached at that moment. Servers choose their tools by what the client declared
 * (server-everything offers 13 tools without elicitation and 15 with): a capability that
 * followed who happened to be attached made the tool list, and so the pins, change with it.
 * A request that arrives when nobody could answer is answered cancel (Elicitations.ask).
 */
export function clientCapabilities(sink: ElicitSink | undefined): ClientCapabilities {
  return sink !== undefined ? { elicitation: { form: {}, url: {} } } : {};
}

/** Hands the server's elicitation requests to `sink` (the SDK checks their shape and the declared modes first). */
export function answerElicitations(client: Client, sink: ElicitSink | undefined, capabilities: ClientCapabilities): void {
  if (sink === undefined || capabilities.elicitation === undefined) return;
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => ({ ...(await sink.ask(request.params as ElicitRequest, extra.signal)) }));
}
