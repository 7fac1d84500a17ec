import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { hostRefusal, newSecret, plain, sameSecret } from '../ui/guard.js';
import { LIMITS, textNestsDeeperThan } from '../core/index.js';
import { MAX_CLIENT_MESSAGE_BYTES, tooDeep } from './frame-guard.js';
import { ModernHttp } from './http-modern.js';
import { DaemonLink, newGatewayId, type SocketLocator } from './link.js';
import { gatewayServer, type GatewayOptions } from './server.js';

/** A request body larger than this is refused (the daemon takes at most 1 MB per frame anyway). */
export const MAX_BODY_BYTES = MAX_CLIENT_MESSAGE_BYTES;
/** MCP sessions open at once; each is one connection to the daemon. */
export const MAX_SESSIONS = 32;
/**
 * By default, a session with no request running, no open stream and none for this long is
 * closed (`--idle-timeout`): most clients (the SDK's Client.close() among them) never send
 * DELETE, and would hold their place until the gateway stops.
 */
export const IDLE_SESSION_MS = 10 * 60 * 1000;
/** Idle sessions are looked for this often at most; more often for a short idle timeout, so one closes soon after its time. */
const SWEEP_MS = 60 * 1000;

export interface HttpOptions {
  /** 0: a free port. */
  readonly port: number;
  /** How long a session with no request running and no open stream is kept; IDLE_SESSION_MS when not given. */
  readonly idleSessionMs?: number;
}
export const MCP_PATH = '/mcp';

export interface HttpGateway {
  /** http://127.0.0.1:PORT/mcp */
  readonly url: string;
  /** The bearer token every request must carry (Authorization: Bearer ...). */
  readonly token: string;
  close(): Promise<void>;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly link: DaemonLink;
  /** When its last request started or ended. */
  lastUsed: number;
  /** POST requests whose answer is still being written: such a session is never closed for room or idleness. */
  busy: number;
  /** Open GET streams (server-to-client messages): a client still listening. */
  streams: number;
}

/** Counts a request of `session` as running until its response closes. */
function track(session: Session, req: IncomingMessage, res: ServerResponse): void {
  const kind = req.method === 'GET' ? 'streams' : 'busy';
  session[kind] += 1;
  session.lastUsed = Date.now();
  res.once('close', () => {
    session[kind] -= 1;
    session.lastUsed = Date.now();
  });
}

/** Closes the sessions idle for `idleMs`; when still full, the least recently used one with no request running (a listening one last). */
function makeRoom(sessions: Map<string, Session>, now: number, idleMs: number): void {
  const drop = (id: string, session: Session): void => {
    // Out of the map at once (its onclose does it too), so the count below is true.
    sessions.delete(id);
    void session.transport.close().catch(() => undefined);
  };
  const idle = [...sessions].filter(([, s]) => s.busy === 0);
  for (const [id, session] of idle) if (session.streams === 0 && now - session.lastUsed >= idleMs) drop(id, session);
  if (sessions.size < MAX_SESSIONS) return;
  const victim = idle.filter(([id]) => sessions.has(id)).sort(([, a], [, b]) => Number(a.streams > 0) - Number(b.streams > 0) || a.lastUsed - b.lastUsed)[0];
  if (victim !== undefined) drop(...victim);
}

/**
 * `wispctl mcp serve --http`: streamable HTTP on 127.0.0.1 only. Loopback TCP is open to
 * every user of the machine and to web pages, so every request passes the web panel's door
 * checks (ui/guard.ts): its Host must be our own address (no DNS-rebound name), an Origin,
 * when sent, must be ours too, and it must carry the bearer token made at start. Each MCP
 * session is its own connection to the daemon (its own client in events and the audit log).
 */
export async function serveHttp(socket: SocketLocator, options: GatewayOptions, { port, idleSessionMs = IDLE_SESSION_MS }: HttpOptions): Promise<HttpGateway> {
  const token = newSecret();
  // One token, one gateway: every session counts against the same client caps at the daemon (64 waiting calls, 40 connections).
  const gateway = newGatewayId();
  const sessions = new Map<string, Session>();
  let opening = 0; // sessions between initialize and their id
  let hosts: ReadonlySet<string> = new Set();
  // 2026-07-28 clients: no session, every request on its own (http-modern.ts); the same gateway id, so the same caps at the daemon.
  const modern = new ModernHttp(socket, gateway, options, { maxBodyBytes: MAX_BODY_BYTES, maxSubscriptions: MAX_SESSIONS });
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) plain(res, 500, 'internal error');
      else res.destroy();
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (doorRefused(req, res, hosts, token)) return;
    const body = req.method === 'POST' ? await readJson(req, res) : undefined;
    if (body === REFUSED) return;
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known !== undefined) {
      track(known, req, res);
      return known.transport.handleRequest(req, res, body);
    }
    if (sessionId !== undefined) return jsonRpcError(res, 404, -32001, 'session not found: initialize again');
    if (req.method === 'POST' && (await modern.claims(req, body))) return modern.serve(req, res, body);
    if (req.method !== 'POST' || !isInitializeRequest(body)) return jsonRpcError(res, 400, -32000, 'no session: the first request must be initialize (2025), or every request must carry the 2026-07-28 _meta envelope');
    makeRoom(sessions, Date.now(), idleSessionMs);
    // Sessions still opening count too: a burst of initialize requests must not pass the cap across the awaits.
    if (sessions.size + opening >= MAX_SESSIONS) return jsonRpcError(res, 503, -32000, `at most ${MAX_SESSIONS} MCP sessions at once, all busy`);
    opening += 1;
    await openSession(req, res, body).finally(() => (opening -= 1));
  };

  const openSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const link = new DaemonLink(socket, gateway);
    await link.connect();
    const mcp = gatewayServer(link, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, link, lastUsed: Date.now(), busy: 0, streams: 0 });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void link.close();
    };
    // The 2025 streamable HTTP transport of the frozen SDK, under the successor Server: a 2025 session as before (2026's stateless HTTP is not served yet).
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
    if (transport.sessionId === undefined) await link.close();
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  // Idle sessions are also closed while no new client comes (each holds a daemon connection).
  const sweep = setInterval(() => makeRoom(sessions, Date.now(), idleSessionMs), Math.min(SWEEP_MS, Math.ceil(idleSessionMs / 4)));
  sweep.unref();
  const bound = (server.address() as AddressInfo).port;
  hosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
  return {
    url: `http://127.0.0.1:${bound}${MCP_PATH}`,
    token,
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((session) => session.transport.close().catch(() => undefined)));
      await modern.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The door checks, on every request of either era: answered with the refusal when one fails. */
function doorRefused(req: IncomingMessage, res: ServerResponse, hosts: ReadonlySet<string>, token: string): boolean {
  if (hostRefusal(req, { hosts, cookieName: '' }) !== null) plain(res, 403, 'this MCP server answers only to its own loopback address (Host refused)');
  else if (req.headers.origin !== undefined && req.headers.origin !== `http://${req.headers.host ?? ''}`) plain(res, 403, 'requests from web pages are refused (Origin refused)');
  else if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_PATH) plain(res, 404, `the MCP endpoint is ${MCP_PATH}`);
  else {
    const auth = req.headers.authorization ?? '';
    if (auth.startsWith('Bearer ') && sameSecret(auth.slice('Bearer '.length), token)) return false;
    plain(res, 401, 'a bearer token is required: the one wispctl mcp serve --http printed', { 'WWW-Authenticate': 'Bearer' });
  }
  return true;
}

const REFUSED = Symbol('refused');

/** The body as JSON, or REFUSED once it was answered with a refusal (too large, not JSON). */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      plain(res, 413, `a request body holds at most ${MAX_BODY_BYTES} bytes`);
      req.destroy();
      return REFUSED;
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  // Measured on its text before it is parsed, as stdio lines are (frame-guard.ts).
  if (textNestsDeeperThan(body, LIMITS.maxFrameNesting)) {
    const refusal = tooDeep();
    jsonRpcError(res, 400, refusal.code, refusal.message);
    return REFUSED;
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    jsonRpcError(res, 400, -32700, 'the body is not JSON');
    return REFUSED;
  }
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
