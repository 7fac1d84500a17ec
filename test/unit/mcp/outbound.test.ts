import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressClass } from '../../../src/mcp/address-class.js';
import { OutboundGuard } from '../../../src/mcp/outbound.js';

describe('addressClass', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.8.7', 'loopback'],
    ['0.0.0.0', 'loopback'],
    ['::1', 'loopback'],
    ['::', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['172.32.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['[2001:4860:4860::8888]', 'public'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['not an address', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(addressClass(address)).toBe(kind);
  });
});

/** Real servers on 127.0.0.1; the guard's two test seams stand for DNS and for a public address. */
describe('OutboundGuard', () => {
  const hits: string[] = [];
  let server: http.Server;
  let port = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      else if (req.url === '/declared-large') res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024));
      else if (req.url === '/streamed-large') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 32);
        let left = 40;
        const pump = (): void => {
          while (left-- > 0) if (!res.write(chunk)) return void res.once('drain', pump);
          res.end();
        };
        res.on('close', () => (left = 0));
        pump();
      } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ host: req.headers.host }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function guard(ownUrl: string, names: Record<string, string[]> = {}, asked: string[] = []): OutboundGuard {
    return new OutboundGuard({
      ownUrl,
      timeoutMs: 5000,
      rules: {
        countAsPublic: [`127.0.0.1:${port}`],
        resolve: (hostname) => {
          asked.push(hostname);
          const found = names[hostname];
          return found !== undefined ? Promise.resolve(found) : Promise.reject(new Error(`ENOTFOUND ${hostname}`));
        },
      },
    });
  }

  it('connects to exactly the addresses it checked, resolving each name once', async () => {
    const asked: string[] = [];
    const g = guard(`http://service.test:${port}/mcp`, { 'service.test': ['127.0.0.1'] }, asked);
    for (const path of ['/a', '/b']) {
      const response = await g.fetch(`http://service.test:${port}${path}`);
      expect(await response.json()).toEqual({ host: `service.test:${port}` });
    }
    expect(asked).toEqual(['service.test']);
    await g.close();
  });

  it('refuses a name that resolves to loopback (or to loopback among public addresses) for a public service, before any request', async () => {
    // Another server on this machine, on a port the seam does not count as public.
    let reached = 0;
    const other = http.createServer((_req, res) => {
      reached += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as { port: number }).port;
    const g = guard(`http://127.0.0.1:${port}/mcp`, { 'rebind.test': ['127.0.0.1'], 'mixed.test': ['93.184.216.34', '127.0.0.1'] });
    await expect(g.fetch(`http://rebind.test:${otherPort}/`)).rejects.toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('a loopback address (127.0.0.1)') });
    await expect(g.fetch(`http://mixed.test:${otherPort}/`)).rejects.toMatchObject({ code: 'DESTINATION_REFUSED' });
    await expect(g.fetch(`http://127.0.0.1:${otherPort}/`)).rejects.toMatchObject({ code: 'DESTINATION_REFUSED' });
    await expect(g.fetch(`http://[::ffff:127.0.0.1]:${otherPort}/`)).rejects.toMatchObject({ code: 'DESTINATION_REFUSED' });
    await expect(g.fetch('file:///etc/passwd')).rejects.toMatchObject({ code: 'DESTINATION_REFUSED' });
    expect(reached).toBe(0);
    await g.close();
    await new Promise((resolve) => other.close(resolve));
  });

  it('lets a service on this machine reach this machine, and a private one its network but not loopback or link-local', async () => {
    const local = guard('http://127.0.0.1:4000/mcp');
    expect((await local.fetch(`http://127.0.0.1:${port}/x`)).status).toBe(200);
    const lan = guard('http://nas.test/mcp', { 'nas.test': ['192.168.1.20'], 'meta.test': ['169.254.169.254'] });
    await expect(lan.fetch('http://127.0.0.1:9/')).rejects.toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('loopback') });
    await expect(lan.fetch('http://meta.test/latest')).rejects.toMatchObject({ code: 'DESTINATION_REFUSED', message: expect.stringContaining('link-local') });
    await Promise.all([local.close(), lan.close()]);
  });

  it('follows no redirect itself', async () => {
    const g = guard(`http://127.0.0.1:${port}/mcp`);
    const response = await g.fetch(`http://127.0.0.1:${port}/redirect`);
    expect({ status: response.status, location: response.headers.get('location') }).toEqual({ status: 302, location: 'http://127.0.0.1:1/elsewhere' });
    await g.close();
  });

  it('cuts a body at 1 MB: declared, before it is read; streamed, as it arrives', async () => {
    const g = guard(`http://127.0.0.1:${port}/mcp`);
    await expect(g.fetch(`http://127.0.0.1:${port}/declared-large`)).rejects.toMatchObject({ code: 'FRAME_TOO_LARGE' });
    const response = await g.fetch(`http://127.0.0.1:${port}/streamed-large`);
    await expect(response.text()).rejects.toMatchObject({ code: 'FRAME_TOO_LARGE', message: expect.stringContaining('1048576-byte limit') });
    await g.close();
  });
});
