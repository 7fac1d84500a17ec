import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, WispEvent } from '../../src/core/index.js';
import { daemonEnv, wispctlBin } from './wispd.js';

/**
 * `wispctl mcp serve` as the official SDK's Client sees it: spawned over stdio from the built
 * bin/wispctl.js, as Claude Desktop or Cursor would. `listChanged()` counts
 * notifications/tools/list_changed and lets a test wait for the next one.
 */
export interface GatewayClient {
  readonly client: Client;
  readonly stderr: () => string;
  /** Resolves at the next notifications/tools/list_changed after this call. */
  nextListChanged(): Promise<void>;
  close(): Promise<void>;
}

export async function stdioGateway(
  socket: string,
  serveArgs: string[] = [],
  options: { name?: string; capabilities?: ClientCapabilities; setup?: (client: Client) => void } = {},
): Promise<GatewayClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [wispctlBin, '--socket', socket, 'mcp', 'serve', ...serveArgs],
    // The SDK takes only string values; the test's own environment, without WISP_* settings.
    env: Object.fromEntries(Object.entries(daemonEnv()).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    stderr: 'pipe',
  });
  let stderr = '';
  // Drained, or a full pipe would stall the gateway.
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: options.name ?? 'test-client', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  const waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    for (const wake of waiters.splice(0)) wake();
  });
  options.setup?.(client);
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    nextListChanged: () => new Promise((resolve) => waiters.push(resolve)),
    close: () => client.close(),
  };
}

/**
 * A human at another socket connection: answers every tool-call approval with `decide`, and
 * remembers each approval it saw (by id) with its outcome.
 */
export async function human(socket: WispClient, decide: (approval: Approval) => 'approve' | 'deny' | null): Promise<{ requested: Approval[]; resolved: Map<string, Extract<WispEvent, { type: 'approval.resolved' }>['approval']> }> {
  const requested: Approval[] = [];
  const resolved = new Map<string, Extract<WispEvent, { type: 'approval.resolved' }>['approval']>();
  socket.onEvent((event) => {
    if (event.type === 'approval.requested') {
      requested.push(event.approval);
      const decision = decide(event.approval);
      if (decision !== null) void socket.call('approvals.respond', { id: event.approval.id, decision }).catch(() => undefined);
    } else if (event.type === 'approval.resolved') resolved.set(event.approval.id, event.approval);
  });
  await socket.call('events.subscribe', { types: ['approval.requested', 'approval.resolved'] });
  return { requested, resolved };
}
