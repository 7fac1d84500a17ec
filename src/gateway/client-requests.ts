import type { ElicitRequest, ElicitResult, Notification, RequestOptions, ServerContext } from '@modelcontextprotocol/server';

/**
 * What a gateway call needs of the request it serves: its cancellation, its progress token,
 * and a way to reach the client on the request's own stream (its notifications and, on a
 * 2025 connection, its elicitations). Narrowed from the successor SDK's handler context, so
 * the call's parts (approval-watch.ts, elicit-relay.ts, notices.ts) do not know the SDK.
 */
export interface Extra {
  readonly signal: AbortSignal;
  readonly progressToken: string | number | undefined;
  /**
   * Whether the request came on the 2026-07-28 revision: no request can be sent to such a
   * client (the revision has no server-to-client requests), so neither approvals nor a
   * server's elicitations are offered to it (they are answered in Wisp).
   */
  readonly modern: boolean;
  sendNotification(notification: Notification): Promise<void>;
  elicit(params: ElicitRequest['params'], options: RequestOptions): Promise<ElicitResult>;
  ping(): Promise<unknown>;
}

export function extraOf(ctx: ServerContext, modern: boolean): Extra {
  const token = ctx.mcpReq._meta?.progressToken;
  return {
    signal: ctx.mcpReq.signal,
    progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
    modern,
    sendNotification: (notification) => ctx.mcpReq.notify(notification),
    elicit: (params, options) => ctx.mcpReq.send({ method: 'elicitation/create', params }, options),
    ping: () => ctx.mcpReq.send({ method: 'ping' }),
  };
}

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
  extra.ping().catch(() => undefined);
}
