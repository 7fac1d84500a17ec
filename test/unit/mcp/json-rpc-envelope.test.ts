import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonRpcMessage } from '../../../src/mcp/stdio-transport.js';

/** What a server may write on stdout; each is either passed to the SDK or refused as PROTOCOL_ERROR. */
const samples: unknown[] = [
  { jsonrpc: '2.0', id: 1, result: {} },
  { jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text: 'x' }] } },
  { jsonrpc: '2.0', id: 1.5, result: {} },
  { jsonrpc: '2.0', id: null, result: {} },
  // Integers past 2^53 are not safe integers: the SDK refuses them as ids and codes.
  { jsonrpc: '2.0', id: 2 ** 53, result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: 1e21, message: 'no' } },
  { jsonrpc: '2.0', id: 1, result: [] },
  { jsonrpc: '2.0', id: 1, result: null },
  { jsonrpc: '2.0', id: 1, result: {}, extra: true },
  { jsonrpc: '1.0', id: 1, result: {} },
  { id: 1, result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no' } },
  { jsonrpc: '2.0', error: { code: -32700, message: 'parse' } },
  { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'no' } },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 2 } },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm', data: { any: 1 } } },
  { jsonrpc: '2.0', id: 1, error: 'nope' },
  { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
  { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
  { jsonrpc: '2.0', method: 'x', params: [] },
  { jsonrpc: '2.0', method: 'x', params: 'p' },
  { jsonrpc: '2.0', method: 'x', other: 1 },
  { jsonrpc: '2.0', id: 3, method: 'ping' },
  { jsonrpc: '2.0', id: 3, method: 'roots/list', params: {} },
  { jsonrpc: '2.0', id: true, method: 'ping' },
  { jsonrpc: '2.0', method: 5 },
  { jsonrpc: '2.0' },
  [],
  [{ jsonrpc: '2.0', id: 1, result: {} }],
  'text',
  42,
  null,
];

describe('the JSON-RPC envelope of a server frame', () => {
  it.each(samples.map((sample) => [JSON.stringify(sample), sample]))('%s: refused exactly when the SDK refuses it', (_text, sample) => {
    expect(isJsonRpcMessage(sample)).toBe(JSONRPCMessageSchema.safeParse(sample).success);
  });

  it('agrees with the SDK on generated messages', () => {
    // Integral doubles past 2^53 are drawn on purpose: they were once told apart from the SDK only by chance.
    const huge = fc.constantFrom(2 ** 53, -(2 ** 53), 1e21);
    const id = fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), fc.boolean(), huge);
    const value = fc.oneof(fc.object(), fc.array(fc.jsonValue()), fc.string(), fc.constant(null));
    const message = fc.record(
      {
        jsonrpc: fc.constantFrom('2.0', '1.0'),
        id,
        method: fc.oneof(fc.string(), fc.integer()),
        params: value,
        result: value,
        error: fc.oneof(fc.record({ code: fc.oneof(fc.integer(), fc.double(), huge), message: fc.oneof(fc.string(), fc.integer()) }), value),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(message, (m) => isJsonRpcMessage(m) === JSONRPCMessageSchema.safeParse(m).success),
      { numRuns: 2000 },
    );
  });
});
