import type { McpServer } from '@modelcontextprotocol/server';
import {
  ErrorCode,
  LoggingLevelSchema,
  McpError,
  type LoggingLevel,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, type WispEvent } from '../core/index.js';
import type { Extra } from './approval-watch.js';
import { fromServer, type Scope } from './catalog.js';
import type { DaemonLink } from './link.js';
import { GatewayOfferings, META_SERVICE, mcpError } from './offerings.js';

/** A tools/call of this connection that runs now: the approval it ran on (once approved), and its request's extra (what relates a notification to it). */
export interface RunningCall {
  readonly approved: () => string | null;
  readonly extra: Extra;
}

type LogEvent = Extract<WispEvent, { type: 'service.log' }>;

const SEVERITY: ReadonlyMap<string, number> = new Map(LoggingLevelSchema.options.map((level, i) => [level, i]));

/**
 * What the services say of their own accord, to this connection's client: their log messages
 * (service.log) at or above the level the client set (logging/setLevel; every level until it
 * sets one: each server logs at its own default, the daemon never sets an upstream's level),
 * a subscribed resource's change (resources/subscribe, counted across clients at the daemon),
 * and their resource and prompt lists changing. Only of the services in scope. A log message
 * a server sent during one of this client's calls (the daemon says which: the one call of that
 * service running then) goes out related to that request, so on HTTP it reaches the client on
 * that call's stream.
 */
export function serveNotices(mcp: McpServer, link: DaemonLink, scope: Scope, owned: (() => void)[]): Set<RunningCall> {
  const server = mcp.server;
  /** The calls running now (server.ts adds and removes them): a log sent during one goes out related to it. */
  const calls = new Set<RunningCall>();
  server.registerCapabilities({ logging: {}, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true } });
  const offerings = new GatewayOfferings(() => link.current(), scope);
  let level: LoggingLevel | null = null;
  /** This client's subscriptions: `serviceId\nURI` (the server's URI) to the URI the client has. */
  const subscribed = new Map<string, string>();
  const inScope = (service: { name: string }): boolean => scope.services === null || scope.services.has(service.name);
  const send = (notification: Parameters<typeof server.notification>[0]): void => {
    server.notification(notification).catch(() => undefined);
  };

  server.setRequestHandler('logging/setLevel', (request) => {
    level = request.params.level;
    return {};
  });
  server.setRequestHandler('resources/subscribe', async (request) => {
    const client = await link.current().catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InternalError);
    });
    const { service, original } = await offerings.resolveUri(client, request.params.uri);
    const key = `${service.id}\n${original}`;
    if (!subscribed.has(key) && subscribed.size >= LIMITS.maxSubscriptionsPerClient) {
      throw new McpError(ErrorCode.InvalidParams, `LIMIT_EXCEEDED: at most ${LIMITS.maxSubscriptionsPerClient} resource subscriptions a client`);
    }
    await client.call('resources.subscribe', { serviceId: service.id, uri: original }).catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InvalidParams);
    });
    subscribed.set(key, request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    const client = await link.current().catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InternalError);
    });
    const { service, original } = await offerings.resolveUri(client, request.params.uri);
    subscribed.delete(`${service.id}\n${original}`);
    await client.call('resources.unsubscribe', { serviceId: service.id, uri: original }).catch((error: unknown) => {
      throw mcpError(error, ErrorCode.InvalidParams);
    });
    return {};
  });

  const listening = link.onEvent((event) => {
    if (event.type === 'service.log') {
      if (!inScope(event.service) || (level !== null && (SEVERITY.get(event.level) ?? 0) < (SEVERITY.get(level) ?? 0))) return;
      const notification: LoggingMessageNotification = { method: 'notifications/message', params: logParams(event, scope.ownNames) };
      const call = event.call !== null && event.call.requester.clientId === link.me ? [...calls].find((c) => c.approved() === event.call?.approvalId) : undefined;
      if (call !== undefined) call.extra.sendNotification(notification).catch(() => undefined);
      else send(notification);
    } else if (event.type === 'service.offerings' && event.changed === 'resource') {
      const uri = subscribed.get(`${event.service.id}\n${event.uri ?? ''}`);
      if (uri !== undefined) send({ method: 'notifications/resources/updated', params: { uri } });
    } else if (event.type === 'service.offerings' && inScope(event.service)) {
      send({ method: event.changed === 'resources' ? 'notifications/resources/list_changed' : 'notifications/prompts/list_changed' });
    }
  });
  owned.push(listening);
  return calls;
}

/**
 * A service's log message as the client is sent it: the server's logger and data as it sent
 * them (the data parsed back from the daemon's JSON text; cut data as text, saying so), the
 * service named in `_meta`; aggregated, the logger is labelled `[from server NAME]` too. An
 * event that only counts dropped messages becomes Wisp's own warning.
 */
export function logParams(event: LogEvent, ownNames: boolean): LoggingMessageNotification['params'] {
  const meta = { _meta: { [META_SERVICE]: event.service.name } };
  if (event.data === null) {
    const text = `Wisp dropped ${event.dropped} log messages of server ${event.service.name} (more than ${LIMITS.maxLogMessagesPerSecond} a second)`;
    return { level: 'warning', logger: 'wisp', data: text, ...meta };
  }
  const data = event.truncated ? `${event.data} [cut by Wisp at ${LIMITS.maxLogDataChars} characters]` : parsed(event.data);
  const logger = ownNames ? event.logger : fromServer(event.service.name, event.logger ?? '').trimEnd();
  return { level: event.level, ...(logger !== null ? { logger } : {}), data, ...meta };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
