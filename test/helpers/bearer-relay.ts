import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain HTTP relay on 127.0.0.1 in front of `wispctl mcp serve --http`, for clients that
 * cannot send a header (the conformance suite's server scenarios connect to a bare URL): it
 * adds the gateway's bearer token to every request and passes everything else through,
 * bodies and event streams as they come. A Host or Origin naming the relay itself is renamed
 * to the gateway's address (the same loopback name, the gateway's port), so a request a
 * browser would send to a local server stays valid; any other Host or Origin (a DNS-rebound
 * name) reaches the gateway unchanged, for it to refuse.
 */
export interface BearerRelay {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBearerRelay(target: string, token: string): Promise<BearerRelay> {
  const upstream = new URL(target);
  let own = '';
  const rename = (value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    for (const name of ['127.0.0.1', 'localhost']) {
      if (value === `${name}:${own}`) return `${name}:${upstream.port}`;
      if (value === `http://${name}:${own}`) return `http://${name}:${upstream.port}`;
    }
    return value;
  };
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const host = rename(req.headers.host);
    if (host !== undefined) headers.host = host;
    const origin = rename(req.headers.origin);
    if (origin !== undefined) headers.origin = origin;
    const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  own = String((server.address() as AddressInfo).port);
  return {
    url: `http://127.0.0.1:${own}${upstream.pathname}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
