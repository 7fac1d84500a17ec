import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { within } from './wait.js';
import { daemonEnv, wispctlBin } from './wispd.js';

type ClientOptions = { capabilities?: ClientCapabilities; setup?: (client: Client) => void };

/**
 * `wispctl mcp serve` as the official SDK's Client sees it: spawned over stdio from the built
 * bin/wispctl.js, as Claude Desktop or Cursor would. `listChanged()` counts
 * notifications/tools/list_changed and lets a test wait for the next one.
 */
export interface GatewayClient {
  readonly client: Client;
  readonly stderr: () => string;
  /** The gateway's process id. */
  readonly pid: number;
  /** Resolves at the next notifications/tools/list_changed after this call. */
  nextListChanged(): Promise<void>;
  close(): Promise<void>;
}

/** Follows notifications/tools/list_changed on `client` (call before connect): the returned function resolves at the next one after it is called. */
export function followListChanged(client: Client): () => Promise<void> {
  const waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    for (const wake of waiters.splice(0)) wake();
  });
  return () => new Promise((resolve) => waiters.push(resolve));
}

/** The environment a spawned `wispctl mcp serve` gets: the test's own, without WISP_* settings (the SDKs take only string values). */
export function gatewayEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(daemonEnv()).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The name the model and the gateway's clients know `tool` of `service` by. */
export async function modelName(socket: WispClient, service: Service, tool: string): Promise<string> {
  const found = (await socket.call('tools.list', { serviceId: service.id })).tools.find((t) => t.name === tool);
  if (found === undefined) throw new Error(`${service.name} has no tool ${tool}`);
  return found.modelName;
}

export async function stdioGateway(
  socket: string,
  serveArgs: string[] = [],
  options: ClientOptions & { name?: string } = {},
): Promise<GatewayClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [wispctlBin, '--socket', socket, 'mcp', 'serve', ...serveArgs],
    env: gatewayEnv(),
    stderr: 'pipe',
  });
  let stderr = '';
  // Drained, or a full pipe would stall the gateway.
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: options.name ?? 'test-client', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  const nextListChanged = followListChanged(client);
  options.setup?.(client);
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    pid: transport.pid ?? 0,
    nextListChanged,
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

/** `wispctl mcp serve --http` running: what it printed, and SDK Clients for it over streamable HTTP. */
export interface HttpGateway {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: URL;
  readonly token: string;
  readonly stderr: () => string;
  /**
   * An SDK Client connected with the token (or `bearer`). `listen: false`: a client that does not
   * open the optional GET stream for server messages (the SDK Client does; the spec lets a
   * client leave it out), so its session is only kept alive by its own requests.
   */
  connect(name: string, options?: ClientOptions & { bearer?: string; listen?: boolean }): Promise<Client>;
  /** Ctrl-C, and its exit code. */
  interrupt(): Promise<number | null>;
}

/** Starts `wispctl mcp serve --http ...serveArgs` on the daemon's socket; resolves once it printed its URL, token and note. */
export async function httpGateway(socket: string, serveArgs: string[] = []): Promise<HttpGateway> {
  const child = spawn(process.execPath, [wispctlBin, '--socket', socket, 'mcp', 'serve', '--http', ...serveArgs], { env: daemonEnv() });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const printed = await new Promise<string>((resolve, reject) => {
    let out = '';
    // The URL and token on stdout, then the note on stderr.
    const check = (): void => {
      if (out.split('\n').length > 2 && stderr.includes('Ctrl-C stops it')) resolve(out);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      check();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      check();
    });
    void exited.then((code) => reject(new Error(`wispctl mcp serve --http exited ${String(code)}: ${stderr}`)));
  });
  const [first, second] = printed.split('\n');
  const url = new URL(first ?? '');
  const token = (second ?? '').replace(/^Authorization: Bearer /, '');
  return {
    child,
    url,
    token,
    stderr: () => stderr,
    connect: async (name, options = {}) => {
      const client = new Client({ name, version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
      options.setup?.(client);
      const noGet: typeof fetch = (input, init) => (init?.method === 'GET' ? Promise.resolve(new Response(null, { status: 405 })) : fetch(input, init));
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { Authorization: `Bearer ${options.bearer ?? token}` } },
          ...(options.listen === false ? { fetch: noGet } : {}),
        }),
      );
      return client;
    },
    interrupt: async () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

/** `wispctl mcp serve` on the raw wire: one JSON-RPC line a request, each answer read back (within the wait budget). */
export function rawGateway(socket: string, serveArgs: string[] = []): { ask: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>; close: () => void } {
  const child = spawn(process.execPath, [wispctlBin, '--socket', socket, 'mcp', 'serve', ...serveArgs], { env: gatewayEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
  const answers = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.id === 'number') answers.get(message.id)?.(message);
  });
  let next = 1;
  const ask = (method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const id = next++;
    const answer = new Promise<Record<string, unknown>>((resolve) => answers.set(id, resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })}\n`);
    return within(`the answer to ${method}`, answer);
  };
  return { ask, close: () => child.stdin.end() };
}
