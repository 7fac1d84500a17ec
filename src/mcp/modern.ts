import { Client as ModernClient, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, type CallToolResult, type ClientCapabilities, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { linkedSignal, type CallSignal } from '../util/index.js';
import { checks } from '#generated/call-result-check.js';
import { progressReport, type ProgressReport } from './call-clock.js';
import { ChannelClosed, RemoteCallError } from './call-channel.js';
import { Failure } from './failure.js';
import type { ElicitSink } from './elicit-handler.js';
import type { OfferKind } from './offerings.js';

/**
 * The 2026-07-28 revision of MCP (stateless: no initialize, a `_meta` envelope on every request,
 * server/discover, subscriptions/listen, input_required), spoken through the successor SDK's
 * Client (@modelcontextprotocol/client). The daemon opens every connection the 2025 way
 * (the frozen @modelcontextprotocol/sdk 1.32.2 Client, byte for byte as before); a server that
 * refuses that `initialize` naming a 2026 revision it speaks is then spoken to in 2026 on the
 * same link (the same process): see docs/architecture.md, "Both eras".
 */
export const MODERN_REVISION = '2026-07-28';

/** JSON-RPC error of the 2026 revision: the request's protocol version is not one the server speaks (its `data.supported` lists them). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * Whether `error` (what the 2025 Client's connect threw) is a server refusing the 2025
 * handshake because it speaks the 2026 revision: its -32022 names 2026-07-28 as supported, or
 * it answered initialize with that revision.
 */
export function refusedForModern(error: unknown): boolean {
  if (error instanceof McpError && error.code === UNSUPPORTED_PROTOCOL_VERSION) return namesModern(error.data);
  if (!(error instanceof Error)) return false;
  if (error.message === `Server's protocol version is not supported: ${MODERN_REVISION}`) return true;
  return refusedOverHttp(error);
}

/** Whether a `data` of -32022 lists 2026-07-28 among the revisions the server speaks. */
function namesModern(data: unknown): boolean {
  const supported = (data as { supported?: unknown } | null | undefined)?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_REVISION);
}

/** What the frozen SDK's streamable HTTP transport throws for a 400 whose body it did not read as a message. */
const HTTP_REFUSAL = /^Streamable HTTP error: Error POSTing to endpoint: (\{[\s\S]*\})$/;

/**
 * Over streamable HTTP a 2026-only server answers the 2025 `initialize` with HTTP 400 and the
 * JSON-RPC error in the body, which the frozen SDK's transport throws as text (a
 * StreamableHTTPError, told by its shape: importing the class would load the remote transports
 * with every connection). The body is the server's (untrusted, already capped by capResponse):
 * only a -32022 answer to our initialize (id 0) that names 2026-07-28 counts.
 */
function refusedOverHttp(error: Error): boolean {
  if ((error as { code?: unknown }).code !== 400) return false;
  const body = HTTP_REFUSAL.exec(error.message)?.[1];
  if (body === undefined) return false;
  try {
    const answer = JSON.parse(body) as { jsonrpc?: unknown; id?: unknown; error?: { code?: unknown; data?: unknown } } | null;
    return answer?.jsonrpc === '2.0' && answer.id === 0 && answer.error?.code === UNSUPPORTED_PROTOCOL_VERSION && namesModern(answer.error.data);
  } catch {
    return false;
  }
}

/**
 * Runs `connect` (the 2025 Client's) with the transport's close held back: that Client closes
 * its transport when initialize fails, and a server that refused it for the 2026 revision is
 * spoken to on the same link next. A close asked for meanwhile happens after, unless `keep(error)`.
 * Resolves with the revision the server chose at initialize (the Client tells the transport).
 */
export async function holdingClose(transport: Transport, connect: () => Promise<void>, keep: (error: unknown) => boolean): Promise<string | undefined> {
  const close = transport.close.bind(transport);
  const told = transport.setProtocolVersion?.bind(transport);
  const held = { asked: false };
  let version: string | undefined;
  transport.close = () => {
    held.asked = true;
    return Promise.resolve();
  };
  transport.setProtocolVersion = (chosen) => {
    version = chosen;
    told?.(chosen);
  };
  try {
    await connect();
    return version;
  } catch (error) {
    // Not awaited, as the 2025 Client does not await it: what failed is told before the process is gone.
    if (!keep(error) && held.asked) void close();
    throw error;
  } finally {
    transport.close = close;
    if (told !== undefined) transport.setProtocolVersion = told;
    else delete transport.setProtocolVersion;
  }
}

/** What a 2026 connection needs from the daemon. */
export interface ModernOptions {
  readonly version: string;
  readonly capabilities: ClientCapabilities;
  readonly elicit: ElicitSink | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** The server announced its tool list changed (on the subscriptions/listen stream). */
  readonly listChanged: () => void;
}

/** One 2026 connection: its Client, and the channel tool calls go through. */
export class ModernPeer {
  private constructor(
    readonly client: ModernClient,
    readonly channel: ModernChannel,
  ) {}

  /**
   * The successor Client over `transport` (already started, already carrying a refused
   * initialize), pinned to 2026-07-28: it sends server/discover in place (on our own
   * transport, so our frame caps and nesting bounds hold), then opens subscriptions/listen for
   * tool-list changes when the server offers them.
   */
  static async connect(transport: Transport, options: ModernOptions): Promise<ModernPeer> {
    const client = new ModernClient(
      { name: 'wispd', version: options.version },
      {
        // The same declaration as at a 2025 initialize (elicit-handler.ts); the two SDKs type it apart.
        capabilities: options.capabilities as never,
        versionNegotiation: { mode: { pin: MODERN_REVISION } },
        // As on 2025 (connection.ts): results are checked by the daemon, not by the SDK.
        jsonSchemaValidator: { getValidator: () => undefined as never },
      },
    );
    client.onerror = () => undefined; // surfaced through the failing request or onclose
    const sink = options.elicit;
    if (sink !== undefined && options.capabilities.elicitation !== undefined) {
      // An input_required's elicitation reaches the same sink a 2025 server's elicitation/create does (the human is asked; the call's clock is held).
      client.setRequestHandler('elicitation/create', async (request, ctx) => {
        return { ...(await sink.ask(request.params, ctx.mcpReq.signal)) };
      });
    }
    client.setNotificationHandler('notifications/tools/list_changed', () => options.listChanged());
    await client.connect(transport, { timeout: options.timeoutMs, signal: options.signal });
    if (client.getServerCapabilities()?.tools?.listChanged === true) {
      await client.listen({ toolsListChanged: true }, { timeout: options.timeoutMs, signal: options.signal });
    }
    return new ModernPeer(client, new ModernChannel(client));
  }

  get protocolVersion(): string {
    return this.client.getNegotiatedProtocolVersion() ?? MODERN_REVISION;
  }

  /** One page of tools/list (the envelope added by the SDK; never served from its cache). */
  async listTools(params: { cursor?: string }, options: { timeout: number; signal: AbortSignal }): Promise<ListToolsResult> {
    try {
      const page = await this.client.listTools(params.cursor === undefined ? undefined : params, { ...options, cacheMode: 'refresh', allowInputRequired: false } as never);
      return page as unknown as ListToolsResult;
    } catch (error) {
      throw modernFailure(error, options.timeout) ?? error;
    }
  }

  /** One request of what the server offers besides tools (offerings.ts), never from the SDK's cache; the server's error as a RemoteCallError. */
  async offer(kind: OfferKind, params: Record<string, unknown>, options: { timeout: number; signal: AbortSignal }): Promise<unknown> {
    const opts = { ...options, cacheMode: 'refresh', allowInputRequired: false } as never;
    try {
      switch (kind) {
        case 'resources/list':
          return await this.client.listResources(params, opts);
        case 'resources/templates/list':
          return await this.client.listResourceTemplates(params, opts);
        case 'resources/read':
          return await this.client.readResource(params as never, opts);
        case 'prompts/list':
          return await this.client.listPrompts(params, opts);
        case 'prompts/get':
          return await this.client.getPrompt(params as never, opts);
        case 'completion/complete':
          return await this.client.complete(params as never, opts);
      }
    } catch (error) {
      if (error instanceof ProtocolError) throw new RemoteCallError(error.code, error.message);
      throw modernFailure(error, options.timeout) ?? error;
    }
  }
}

/**
 * tools/call on a 2026 connection, through the successor Client (it adds the `_meta` envelope
 * and answers input_required rounds through the elicitation sink). Its answer is checked by our
 * own schema (call-result-schema.ts), as on 2025; errors come out as the 2025 CallChannel's do.
 */
export class ModernChannel {
  constructor(private readonly client: ModernClient) {}

  async call(name: string, args: Record<string, unknown>, signal: CallSignal, progress: { touch(report?: ProgressReport): void }): Promise<CallToolResult> {
    signal.throwIfAborted();
    const linked = linkedSignal(signal);
    try {
      // The call's one clock is the daemon's (CallClock); the SDK's is set out of its way.
      const result: unknown = await this.client.callTool(
        { name, arguments: args },
        { signal: linked.signal, timeout: 2 ** 31 - 1, onprogress: (report) => progress.touch(progressReport(report)), resetTimeoutOnProgress: true },
      );
      if (!checks.callResult(result)) throw new Failure('PROTOCOL_ERROR', "the server's answer to tools/call is not a tool result");
      return { ...result, content: result.content ?? [] } as CallToolResult;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof ProtocolError) throw new RemoteCallError(error.code, error.message);
      if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) throw new ChannelClosed();
      throw error;
    } finally {
      linked.dispose();
    }
  }
}

/** A successor-SDK error in the catalog's terms (its own timeout, the connection closing), or undefined. */
export function modernFailure(error: unknown, timeoutMs: number): Failure | undefined {
  if (!(error instanceof SdkError)) return undefined;
  if (error.code === SdkErrorCode.RequestTimeout) return new Failure('TIMEOUT', `the server did not answer within ${timeoutMs} ms`);
  if (error.code === SdkErrorCode.ConnectionClosed) return new Failure('CONNECTION_CLOSED', 'the connection to the server closed');
  return new Failure('PROTOCOL_ERROR', `the server's answer was refused: ${error.message.slice(0, 1000)}`);
}
