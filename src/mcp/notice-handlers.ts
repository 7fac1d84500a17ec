import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { NoticeSink } from './server-notices.js';

/**
 * Hands what a 2025-era server says of its own accord to `sink` (server-notices.ts): its log
 * messages, a resource changed, its resource or prompt list changed. Each as the SDK parsed
 * it (a log message with no valid level is refused there); nothing after `closed()`. A 2026
 * connection (modern.ts) does not relay them yet.
 */
export function relayNotices(client: Client, sink: NoticeSink | undefined, closed: () => boolean): void {
  if (sink === undefined) return;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    if (!closed()) sink.log(notification.params);
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    if (!closed()) sink.updated(notification.params.uri);
  });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    if (!closed()) sink.listChanged('resources');
  });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    if (!closed()) sink.listChanged('prompts');
  });
}
