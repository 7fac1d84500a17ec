import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { refusedForModern } from '../../../src/mcp/modern.js';

/**
 * When the daemon goes on in 2026-07-28 after a refused `initialize` (src/mcp/modern.ts): only a
 * refusal that names that revision, on stdio (a JSON-RPC -32022) or over streamable HTTP (HTTP
 * 400 whose body is that error, thrown by the frozen SDK's transport as text). Anything else a
 * server answers stays the failure it was.
 */
const refusal = (error: unknown, id: unknown = 0) => JSON.stringify({ jsonrpc: '2.0', id, error });
const over400 = (body: string, status = 400) => new StreamableHTTPError(status, `Error POSTing to endpoint: ${body}`);
const unsupported = (supported: unknown) => ({ code: -32022, message: 'Unsupported protocol version: 2025-11-25', data: { supported, requested: '2025-11-25' } });

describe('a refused initialize', () => {
  it('goes on in 2026 for a -32022 naming 2026-07-28 on stdio, or an initialize answered with that revision', () => {
    expect(refusedForModern(new McpError(-32022, 'Unsupported protocol version', { supported: ['2026-07-28'] }))).toBe(true);
    expect(refusedForModern(new Error("Server's protocol version is not supported: 2026-07-28"))).toBe(true);
    expect(refusedForModern(new McpError(-32022, 'Unsupported protocol version', { supported: ['2099-01-01'] }))).toBe(false);
    expect(refusedForModern(new McpError(-32602, 'bad', { supported: ['2026-07-28'] }))).toBe(false);
  });

  it('goes on in 2026 for an HTTP 400 whose body is our initialize refused for 2026-07-28', () => {
    expect(refusedForModern(over400(refusal(unsupported(['2026-07-28']))))).toBe(true);
  });

  it('does not for any other HTTP answer', () => {
    // Another revision, another code, another request's id, not JSON-RPC, a 500, a body that is not JSON.
    expect(refusedForModern(over400(refusal(unsupported(['2099-01-01']))))).toBe(false);
    expect(refusedForModern(over400(refusal({ ...unsupported(['2026-07-28']), code: -32600 })))).toBe(false);
    expect(refusedForModern(over400(refusal(unsupported(['2026-07-28']), 7)))).toBe(false);
    expect(refusedForModern(over400(JSON.stringify({ id: 0, error: unsupported(['2026-07-28']) })))).toBe(false);
    expect(refusedForModern(over400(refusal(unsupported(['2026-07-28'])), 500))).toBe(false);
    expect(refusedForModern(over400('{"jsonrpc":"2.0", "2026-07-28"'))).toBe(false);
    expect(refusedForModern(over400('<html>2026-07-28</html>'))).toBe(false);
    expect(refusedForModern(over400(refusal({ code: -32022, message: 'x', data: null })))).toBe(false);
    expect(refusedForModern(over400('null'))).toBe(false);
  });
});
