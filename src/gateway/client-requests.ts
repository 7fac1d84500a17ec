import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { EmptyResultSchema, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What the calls of one gateway connection share. */
export interface Shared {
  /** The approval requests and elicitations already taken by one of them (one call each). */
  readonly claimed: Set<string>;
  /** Whether any request was sent to the client yet (see spendIdZero). */
  requestSent: boolean;
}

/**
 * The first request this connection sends to its client gets id 0, and the TypeScript SDK's
 * clients drop a notifications/cancelled for id 0 (typescript-sdk#2283): an elicitation with
 * that id could not be withdrawn when it is answered in Wisp. So the first request is a
 * ping, on this call's stream; its answer is not waited for.
 */
export function spendIdZero(extra: Extra, shared: Shared): void {
  if (shared.requestSent) return;
  shared.requestSent = true;
  extra.sendRequest({ method: 'ping' }, EmptyResultSchema).catch(() => undefined);
}
