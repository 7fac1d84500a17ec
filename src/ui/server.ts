import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WispClient } from '../control/client.js';
import { WispError } from '../core/index.js';
import { ALLOWED_METHODS, handleCall, json } from './api.js';
import { socketBackend, type PanelBackend } from './backend.js';
import { EventStreams, PANEL_EVENT_TYPES } from './event-stream.js';
import { SECURITY_HEADERS, hostRefusal, newSecret, originRefusal, plain, readCookie, sameSecret, sessionCookie, type Door } from './guard.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';

export interface PanelOptions {
  /** The daemon's socket; or demo: the in-memory demo daemon (wispctl ui --demo), no socket. */
  readonly socket: string | { readonly demo: true };
  /** 0 (the default): a free port. */
  readonly port?: number;
  /** Where the browser app is (default: next to the built module). */
  readonly staticDir?: string;
}

export interface Panel {
  /** `http://127.0.0.1:PORT/?token=...`: the only way in, valid once. */
  readonly url: string;
  readonly port: number;
  /** The addresses listened on: 127.0.0.1, and ::1 where the machine has it. */
  readonly addresses: readonly string[];
  /** Resolves when the panel ended: with the daemon's going away, or with close(). */
  readonly ended: Promise<{ readonly daemonGone: boolean; readonly reason: string }>;
  close(): Promise<void>;
}

/** The panel's state of entry: the one-time token until it is used, then the session cookie's value. */
interface Entry {
  token: string | null;
  session: string | null;
}

function listen(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The token exchange: `/?token=` once, for the cookie; the answer drops it from the address bar. */
function exchange(req: IncomingMessage, res: ServerResponse, url: URL, entry: Entry, door: Door): void {
  const given = url.searchParams.get('token') ?? '';
  const hasSession = entry.session !== null && sameSecret(readCookie(req, door.cookieName) ?? '', entry.session);
  if (hasSession) {
    plain(res, 303, 'see /', { Location: '/' });
    return;
  }
  if (entry.token === null || url.pathname !== '/' || !sameSecret(given, entry.token)) {
    plain(res, 401, 'this link is not valid: it was used already, or it is from another run of wispctl ui. Start wispctl ui again for a new one (if you did not open this panel yourself, someone else did: stop it).');
    return;
  }
  entry.token = null;
  entry.session = newSecret();
  plain(res, 303, 'see /', { Location: '/', 'Set-Cookie': sessionCookie(door.cookieName, entry.session) });
}

function routeStatic(req: IncomingMessage, res: ServerResponse, file: StaticFile | undefined): void {
  if (file === undefined) {
    plain(res, 404, 'not found');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    plain(res, 405, 'method not allowed', { Allow: 'GET, HEAD' });
    return;
  }
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': file.type, 'Content-Length': String(file.body.length) });
  res.end(req.method === 'HEAD' ? undefined : file.body);
}

/** Where a page's stream resumes: the browser's Last-Event-ID on a reconnect, or ?since=. */
function sinceOf(req: IncomingMessage, url: URL): number | null {
  const given = req.headers['last-event-id'] ?? url.searchParams.get('since') ?? '';
  return typeof given === 'string' && /^[0-9]{1,15}$/.test(given) ? Number(given) : null;
}

interface Handler {
  readonly door: Door;
  readonly entry: Entry;
  readonly backend: PanelBackend;
  readonly streams: EventStreams;
  readonly files: ReadonlyMap<string, StaticFile>;
}

/** Every request, in order: Host, the token exchange, the cookie, Origin, then the route. */
function handle(req: IncomingMessage, res: ServerResponse, h: Handler): void {
  const refusal = hostRefusal(req, h.door);
  if (refusal !== null) return plain(res, refusal.status, refusal.message);
  const url = new URL(req.url ?? '/', 'http://panel.invalid');
  if (url.searchParams.has('token')) return exchange(req, res, url, h.entry, h.door);
  if (h.entry.session === null || !sameSecret(readCookie(req, h.door.cookieName) ?? '', h.entry.session)) {
    return plain(res, 401, 'not signed in: open the URL that wispctl ui printed (it works once)');
  }
  const badOrigin = originRefusal(req);
  if (badOrigin !== null) return plain(res, badOrigin.status, badOrigin.message);
  if (url.pathname === '/api/call') {
    if (req.method !== 'POST') return plain(res, 405, 'method not allowed', { Allow: 'POST' });
    void handleCall(req, res, h.backend);
    return;
  }
  if (url.pathname === '/api/panel') {
    if (req.method !== 'GET') return plain(res, 405, 'method not allowed', { Allow: 'GET' });
    // What the pages need to know of this panel: demo or not, and the lists they follow and call.
    return json(res, 200, { demo: h.backend.demo, eventTypes: PANEL_EVENT_TYPES, methods: [...ALLOWED_METHODS] });
  }
  if (url.pathname === '/api/events/held') {
    if (req.method !== 'GET') return plain(res, 405, 'method not allowed', { Allow: 'GET' });
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
    res.end(h.streams.held());
    return;
  }
  if (url.pathname === '/api/events') {
    if (req.method !== 'GET') return plain(res, 405, 'method not allowed', { Allow: 'GET' });
    if (!h.streams.open(res, sinceOf(req, url))) json(res, 503, { ok: false, error: { code: 'LIMIT_EXCEEDED', message: 'too many pages follow the events' } });
    return;
  }
  routeStatic(req, res, h.files.get(url.pathname));
}

/** Listens on 127.0.0.1 and, on the same port, ::1 when the machine has it. */
async function listenLoopback(handler: http.RequestListener, port: number): Promise<{ servers: http.Server[]; port: number; addresses: string[] }> {
  const v4 = http.createServer(handler);
  const bound = await listen(v4, '127.0.0.1', port);
  const servers = [v4];
  const addresses = [`127.0.0.1:${bound}`];
  const v6 = http.createServer(handler);
  try {
    await listen(v6, '::1', bound);
    servers.push(v6);
    addresses.push(`[::1]:${bound}`);
  } catch {
    // No IPv6 loopback here (or the port is taken on it): 127.0.0.1 is enough.
  }
  return { servers, port: bound, addresses };
}

/** The demo daemon, loaded only for --demo. */
async function startDemo(): Promise<PanelBackend> {
  const { DemoDaemon } = await import('./demo/index.js');
  return DemoDaemon.start();
}

/**
 * Starts the panel: connects to the daemon (DAEMON_NOT_RUNNING if nothing answers), follows
 * its events, and serves the app on loopback. The token lives in memory only.
 */
export async function startPanel(options: PanelOptions): Promise<Panel> {
  const files = loadStaticFiles(options.staticDir);
  const client = typeof options.socket === 'string' ? socketBackend(await WispClient.connect(options.socket)) : await startDemo();
  const streams = new EventStreams();
  const entry: Entry = { token: newSecret(), session: null };
  let door: Door = { hosts: new Set(), cookieName: '' };
  let listening: Awaited<ReturnType<typeof listenLoopback>>;
  try {
    listening = await listenLoopback((req, res) => handle(req, res, { door, entry, backend: client, streams, files }), options.port ?? 0);
    door = { hosts: new Set(listening.addresses), cookieName: `wisp_panel_${listening.port}` };
    client.onEvent((event) => streams.send(event));
    // From the start of what the daemon holds, so the Events page opens on its history (GET /api/events/held).
    const subscribed = (await client.call('events.subscribe', { since: 0, types: [...PANEL_EVENT_TYPES] })) as { missed?: unknown } | null;
    streams.startedLate = subscribed?.missed === true;
  } catch (error) {
    await client.close();
    throw error;
  }
  const { servers, port, addresses } = listening;
  let finish: (how: { daemonGone: boolean; reason: string }) => void = () => undefined;
  const ended = new Promise<{ daemonGone: boolean; reason: string }>((resolve) => (finish = resolve));
  let stopped = false;
  const stop = async (how: { daemonGone: boolean; reason: string }): Promise<void> => {
    if (stopped) return;
    stopped = true;
    streams.close();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    })));
    finish(how);
  };
  client.onEvent((event) => {
    if (event.type === 'daemon.stopping') void stop({ daemonGone: true, reason: 'the daemon is stopping' }).then(() => client.close());
  });
  client.onClose((error) => void stop({ daemonGone: true, reason: error instanceof WispError ? error.message : 'the connection to the daemon closed' }));
  return {
    url: `http://127.0.0.1:${port}/?token=${entry.token ?? ''}`,
    port,
    addresses,
    ended,
    close: async () => {
      await stop({ daemonGone: false, reason: 'closed' });
      await client.close();
    },
  };
}
