import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { TransportFailure } from './failure.js';
import { capResponse, withBearer, type HttpTransportOptions } from './http-transport.js';

/**
 * The SDK's legacy HTTP+SSE client transport (a GET event stream, messages POSTed to the
 * endpoint it names) behind the same capping fetch as streamable HTTP: every response and
 * every SSE event is counted and cut at the limit, header values go with every request.
 *
 * A legacy session lives exactly as long as its GET stream. The EventSource under the SDK
 * reconnects on its own, into a new session the client never initialized, so a second
 * stream after one was open is refused and fails the connection instead.
 */
export class SseTransport {
  readonly inner: SSEClientTransport;
  private tripped: TransportFailure | undefined;
  private streamOpened = false;
  private stopping = false;
  /** The last authorization challenge (401/403 WWW-Authenticate) the server sent. */
  challenge: { resourceMetadataUrl?: URL; scope?: string } | undefined;

  constructor(private readonly options: HttpTransportOptions) {
    const base = options.fetch ?? ((url: string | URL, init?: RequestInit) => fetch(url, init));
    const capped: FetchLike = async (url, init) => {
      const stream = (init?.method ?? 'GET').toUpperCase() === 'GET';
      if (stream && this.streamOpened) {
        throw this.trip({ code: 'SERVER_EXITED', message: `${options.url} ended its SSE event stream, and the session with it` });
      }
      const response = this.cap(await base(url, init));
      if (stream && response.ok) {
        this.streamOpened = true;
        return this.endWatched(response);
      }
      return response;
    };
    this.inner = new SSEClientTransport(new URL(options.url), {
      // OAuth: the same bearer wrapper as streamable HTTP (one shared renewal on a 401).
      fetch: options.bearer === undefined ? capped : withBearer(capped, options.bearer),
      requestInit: { headers: { ...options.headers } },
    });
  }

  get failure(): TransportFailure | undefined {
    return this.tripped;
  }

  /** Closes the event stream (a legacy server has no session to end otherwise). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.inner.close().catch(() => undefined);
  }

  private trip(failure: TransportFailure): Error {
    if (this.tripped === undefined) {
      this.tripped = failure;
      this.options.onFailure(failure);
    }
    return new Error(failure.message);
  }

  private cap(response: Response): Response {
    if (response.status === 401 || response.status === 403) this.challenge = extractWWWAuthenticateParams(response);
    return capResponse(response, this.options, (failure) => this.trip(failure));
  }

  /**
   * The stream's body, with its end failing the connection at once: the server closed it,
   * or it broke (the server went away). Our own stop ends it too, and says nothing.
   */
  private endWatched(response: Response): Response {
    const source: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
    if (source === undefined) return response;
    const ended = (): void => {
      if (!this.stopping) this.trip({ code: 'SERVER_EXITED', message: `${this.options.url} ended its SSE event stream, and the session with it` });
    };
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const chunk = await source.read();
          if (chunk.done) {
            ended();
            controller.close();
          } else controller.enqueue(chunk.value);
        } catch (error) {
          ended();
          controller.error(error);
        }
      },
      cancel: (reason) => source.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}
