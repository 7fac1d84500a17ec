import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killLeftovers, RawClient, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

interface RpcError {
  jsonrpc: '2.0';
  id: unknown;
  error: { code: number; message: string; data: { code: string; errors?: { path: string; message: string }[] } };
}

let daemon: RunningDaemon;
let dir: { path: string; remove: () => void };
let bystander: RawClient;

beforeAll(async () => {
  dir = tempDir();
  daemon = await startWispd(dir.path);
});
afterAll(() => {
  killLeftovers();
  dir.remove();
});

// After every bad-input case, a client that did nothing wrong must still be served.
async function bystanderStillServed(): Promise<void> {
  bystander = await RawClient.connect(daemon.socket);
  bystander.request(99, 'daemon.status');
  const [reply] = (await bystander.waitFor(1)) as { id: number; result: { pid: number } }[];
  expect(reply).toMatchObject({ id: 99, result: { pid: daemon.pid } });
  bystander.close();
}
afterEach(bystanderStillServed);

async function ask(frames: string | Buffer, count = 1): Promise<RpcError[]> {
  const client = await RawClient.connect(daemon.socket);
  client.send(frames);
  const replies = (await client.waitFor(count)) as RpcError[];
  client.close();
  return replies;
}

describe('bad input on the control socket', () => {
  it('answers malformed JSON with a parse error and keeps the connection', async () => {
    const client = await RawClient.connect(daemon.socket);
    client.send('{"jsonrpc":"2.0","id":1,"method":\n');
    client.request(2, 'daemon.status');
    const [first, second] = (await client.waitFor(2)) as [RpcError, { id: number; result: unknown }];
    expect(first).toMatchObject({ id: null, error: { code: -32700, data: { code: 'PARSE_ERROR' } } });
    expect(second).toMatchObject({ id: 2, result: { pid: daemon.pid } });
    client.close();
  });

  it('answers invalid UTF-8 with a parse error', async () => {
    const [reply] = await ask(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]));
    expect(reply).toMatchObject({ id: null, error: { code: -32700, data: { code: 'PARSE_ERROR' } } });
  });

  it('refuses a 2 MB frame once and closes only that connection', async () => {
    const other = await RawClient.connect(daemon.socket);
    const client = await RawClient.connect(daemon.socket);
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'services.register', params: { name: 'x', command: 'y'.repeat(2 * 1024 * 1024) } });
    client.send(`${huge}\n`);
    await client.closed;
    expect(client.received).toEqual([
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600, data: { code: 'FRAME_TOO_LARGE', max: 1048576 } }) }),
    ]);
    other.request(5, 'services.list');
    expect(await other.waitFor(1)).toEqual([{ jsonrpc: '2.0', id: 5, result: { services: [] } }]);
    other.close();
  });

  it('accepts a frame of exactly the limit but not one byte more', async () => {
    const base = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'daemon.status', params: {}, pad: '' });
    const exact = base.replace('"pad":""', `"pad":"${'p'.repeat(1024 * 1024 - base.length)}"`);
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    const [ok] = (await ask(`${exact}\n`)) as unknown as { id: number; result?: unknown; error?: unknown }[];
    // An unknown member in the envelope is ignored, so the request itself succeeds.
    expect(ok).toMatchObject({ id: 1, result: { pid: daemon.pid } });
    const [tooBig] = await ask(`${exact}x\n`);
    expect(tooBig?.error.data.code).toBe('FRAME_TOO_LARGE');
  });

  it('answers an unknown method with -32601', async () => {
    const [reply] = await ask('{"jsonrpc":"2.0","id":"a","method":"services.explode"}\n');
    expect(reply).toMatchObject({ id: 'a', error: { code: -32601, data: { code: 'METHOD_NOT_FOUND' } } });
  });

  it('answers requests that are not JSON-RPC 2.0 with -32600', async () => {
    const replies = await ask(['{"id":1,"method":"daemon.status"}', '[]', '42', '{"jsonrpc":"2.0","id":{},"method":"daemon.status"}', '{"jsonrpc":"2.0","id":3,"method":7}'].join('\n') + '\n', 5);
    expect(replies.map((r) => [r.id, r.error.code, r.error.data.code])).toEqual([
      [1, -32600, 'INVALID_REQUEST'],
      [null, -32600, 'INVALID_REQUEST'],
      [null, -32600, 'INVALID_REQUEST'],
      [null, -32600, 'INVALID_REQUEST'],
      [3, -32600, 'INVALID_REQUEST'],
    ]);
  });

  it('answers wrong param types with -32602 naming each failing field', async () => {
    const [reply] = await ask(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'services.register', params: { name: 7, command: '', args: 'not-an-array', extra: true } })}\n`);
    expect(reply?.error.code).toBe(-32602);
    expect(reply?.error.data.code).toBe('INVALID_PARAMS');
    const paths = reply?.error.data.errors?.map((e) => e.path) ?? [];
    expect(paths).toEqual(expect.arrayContaining(['/name', '/command', '/args', '/']));
    expect(reply?.error.data.errors?.find((e) => e.path === '/')?.message).toContain('extra');
  });

  it('refuses positional params', async () => {
    const [reply] = await ask('{"jsonrpc":"2.0","id":1,"method":"services.list","params":[]}\n');
    expect(reply).toMatchObject({ error: { code: -32602, data: { code: 'INVALID_PARAMS' } } });
  });

  it('refuses a relative cwd with INVALID_CONFIG and stores nothing', async () => {
    const [reply] = await ask(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'services.register', params: { name: 'rel', command: '/bin/true', cwd: 'some/dir' } })}\n`);
    expect(reply).toMatchObject({ error: { code: -32000, data: { code: 'INVALID_CONFIG', field: 'cwd' } } });
    expect(reply?.error.message).toContain('absolute');
    const [list] = (await ask('{"jsonrpc":"2.0","id":2,"method":"services.list"}\n')) as unknown as { result: { services: unknown[] } }[];
    expect(list?.result.services).toEqual([]);
  });

  it('refuses a bad service name', async () => {
    const replies = await ask(
      ['', '-lead', 'a'.repeat(65), 'has space', 'slash/name'].map((name, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'services.register', params: { name, command: '/bin/true' } })).join('\n') + '\n',
      5,
    );
    expect(replies.map((r) => r.error.data.code)).toEqual(Array(5).fill('INVALID_PARAMS'));
  });

  it('refuses a duplicate name and a 17th service, keeping the 16 it has', async () => {
    const client = await RawClient.connect(daemon.socket);
    for (let i = 0; i < 16; i++) client.request(i, 'services.register', { name: `svc-${i}`, command: '/bin/true' });
    const registered = (await client.waitFor(16)) as { result?: unknown }[];
    expect(registered.every((r) => r.result !== undefined)).toBe(true);
    client.request(100, 'services.register', { name: 'svc-3', command: '/bin/true' });
    client.request(101, 'services.register', { name: 'svc-16', command: '/bin/true' });
    const refusals = (await client.waitFor(18)).slice(16) as RpcError[];
    // Responses may arrive in any order; match them by id.
    const byId = new Map(refusals.map((r) => [r.id, r]));
    expect(byId.get(100)).toMatchObject({ error: { code: -32000, data: { code: 'SERVICE_NAME_TAKEN' } } });
    expect(byId.get(101)).toMatchObject({ error: { code: -32000, data: { code: 'LIMIT_EXCEEDED', limit: 'maxServices', max: 16 } } });
    client.request(102, 'services.list');
    const [list] = (await client.waitFor(19)).slice(18) as { result: { services: unknown[] } }[];
    expect(list?.result.services).toHaveLength(16);
    const onDisk = JSON.parse(readFileSync(path.join(dir.path, 'mcp-servers.json'), 'utf8')) as { services: unknown[] };
    expect(onDisk.services).toHaveLength(16);
    for (let i = 0; i < 16; i++) client.request(200 + i, 'services.delete', { name: `svc-${i}` });
    await client.waitFor(35);
    client.close();
  });

  it('handles a batch, answering each request and skipping notifications', async () => {
    const [batch] = (await ask(
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'services.list' },
        { jsonrpc: '2.0', method: 'services.list' },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
      ])}\n`,
    )) as unknown as unknown[][];
    expect(batch).toEqual([
      { jsonrpc: '2.0', id: 1, result: { services: [] } },
      expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32601 }) }),
    ]);
  });
});
