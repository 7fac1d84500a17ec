import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createMcpHandler, isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import { DaemonLink, type SocketLocator } from './link.js';
import { Rounds } from './rounds.js';
import { CatalogView, gatewayServer, type GatewayOptions } from './server.js';

/**
 * `wispctl mcp serve --http` for 2026-07-28 clients: stateless and session-less, each POST
 * carrying its own `_meta` envelope (and the `Mcp-Method`/`Mcp-Name` headers the SDK checks
 * against the body), answered by one instance of gatewayServer made for that request (the
 * successor SDK's createMcpHandler, modern-only: 2025 traffic stays on http.ts's sessions).
 * Every instance shares one connection to the daemon and one view of its catalog, whose
 * changes go out on the clients' `subscriptions/listen` streams. The door checks (Host,
 * Origin, the bearer token), the body cap and the nesting bound are http.ts's, before this.
 */
export class ModernHttp {
  private readonly link: DaemonLink;
  private readonly handler: McpHttpHandler;
  private readonly release: () => void;
  private connecting: Promise<void> | null = null;

  constructor(socket: SocketLocator, gateway: string, options: GatewayOptions, limits: { maxBodyBytes: number; maxSubscriptions: number }) {
    this.link = new DaemonLink(socket, gateway);
    const view = new CatalogView(this.link, options, () => Promise.resolve(this.handler.notify.toolsChanged()));
    // Stateless: there is no handshake to wait for, every client may be told.
    view.initialized = true;
    // One set of rounds too: a call's retry may come on another connection than its first request.
    const rounds = new Rounds();
    const following = view.follow();
    this.release = () => {
      following();
      rounds.close();
    };
    this.handler = createMcpHandler(() => gatewayServer(this.link, options, { view, rounds }), {
      legacy: 'reject',
      maxRequestBodySize: limits.maxBodyBytes,
      maxSubscriptions: limits.maxSubscriptions,
      onerror: () => undefined,
    });
  }

  /** Whether this POST (its body already read and checked) is 2026 traffic: it carries the envelope, or names a 2026 revision in its header. */
  async claims(req: IncomingMessage, body: unknown): Promise<boolean> {
    return !(await isLegacyRequest(webRequest(req, undefined), body));
  }

  async serve(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    this.connecting ??= this.link.connect();
    await this.connecting;
    // The client going away ends its exchange (a listen stream, a call waiting for approval: the daemon is asked to cancel it).
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const response = await this.handler.fetch(webRequest(req, gone.signal), { parsedBody: body });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      res.end();
      return;
    }
    Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>)
      .on('error', () => res.destroy())
      .pipe(res);
  }

  async close(): Promise<void> {
    this.release();
    await this.handler.close().catch(() => undefined);
    await this.link.close();
  }
}

/** The web-standard Request the SDK reads: method, URL and headers (the body is given parsed). */
function webRequest(req: IncomingMessage, signal: AbortSignal | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.set(name, value);
  }
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), { method: req.method ?? 'POST', headers, ...(signal !== undefined ? { signal } : {}) });
}
