import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { WispEvent } from '../../../src/core/index.js';
import { EventStreams } from '../../../src/ui/event-stream.js';

/**
 * The panel's event stream over a real HTTP connection: a page that reconnects with the
 * last seq it had (the browser sends Last-Event-ID) gets exactly what came since, in order,
 * once; when that is no longer held, a `missed` event says so first.
 */

function event(seq: number): WispEvent {
  return { seq, at: new Date(0).toISOString(), type: 'session.deleted', sessionId: `s${seq}` };
}

interface Received {
  ids: number[];
  missed: string[];
}

/** Opens the stream with since, reads until the event with seq `until`, then closes it. */
function read(port: number, since: string | null, until: number): Promise<Received> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers: since !== null ? { 'Last-Event-ID': since } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        const blocks = text.split('\n\n').filter((b) => b.includes('data: '));
        const ids = blocks.flatMap((b) => (/^id: (\d+)$/m.exec(b)?.[1] !== undefined ? [Number(/^id: (\d+)$/m.exec(b)?.[1])] : []));
        if (ids.includes(until)) {
          req.destroy();
          resolve({ ids, missed: blocks.filter((b) => b.startsWith('event: missed')).map((b) => b.replace(/^event: missed\ndata: /, '')) });
        }
      });
    });
    req.on('error', reject);
  });
}

describe('the panel\'s event stream', () => {
  let server: http.Server | undefined;
  let streams: EventStreams | undefined;

  afterEach(async () => {
    streams?.close();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  });

  async function serve(): Promise<{ port: number; streams: EventStreams }> {
    const s = new EventStreams();
    streams = s;
    server = http.createServer((req, res) => {
      const id = req.headers['last-event-id'];
      s.open(res, typeof id === 'string' ? Number(id) : null);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, streams: s };
  }

  it('replays what came after the last seq a page had: no gap, no duplicate, then live', async () => {
    const { port, streams: s } = await serve();
    for (let seq = 1; seq <= 5; seq += 1) s.send(event(seq));
    const resumed = read(port, '3', 7);
    // The replay is written when the stream opens; 6 and 7 come live after it.
    await expect.poll(() => s.size).toBe(1);
    s.send(event(6));
    s.send(event(7));
    expect(await resumed).toEqual({ ids: [4, 5, 6, 7], missed: [] });
  });

  it('a page with no seq gets nothing old; one whose seq is no longer held is told, then gets all that is', async () => {
    const { port, streams: s } = await serve();
    for (let seq = 1; seq <= 1005; seq += 1) s.send(event(seq));
    const fresh = read(port, null, 1006);
    await expect.poll(() => s.size).toBe(1);
    s.send(event(1006));
    expect((await fresh).ids).toEqual([1006]);
    const late = await read(port, '2', 1006);
    expect(late.missed).toEqual([JSON.stringify({ since: 2, heldFrom: 7 })]);
    expect(late.ids[0]).toBe(7);
    expect(late.ids).toHaveLength(1000);
    expect(new Set(late.ids).size).toBe(1000);
  });
});
