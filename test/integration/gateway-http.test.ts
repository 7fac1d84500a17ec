import http from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { human, httpGateway, type HttpGateway } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { until } from '../helpers/wait.js';

/**
 * Issue 16: `wispctl mcp serve --http` with the official SDK Client over streamable HTTP,
 * and the door: the bearer token, the Host and the Origin.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let files: Service;
let gateway: HttpGateway;
let url: URL;
let token: string;
let policy: (approval: Approval) => 'approve' | 'deny' | null = () => 'approve';

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

function connectClient(name: string, bearer = token): Promise<Client> {
  return gateway.connect(name, { bearer });
}

/** One raw request to the gateway's port, with the headers given (Host included): its status. */
function rawStatus(headers: Record<string, string>, pathname = '/mcp'): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: Number(url.port), path: pathname, method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await human(await daemon.connect(), (approval) => policy(approval));
  await registerScenario(admin, 'files', ['--call-tools']);
  files = await activate(admin, 'files');
  gateway = await httpGateway(daemon.socket);
  ({ url, token } = gateway);
});

afterAll(async () => {
  gateway.child.kill('SIGKILL');
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve --http', () => {
  it('prints a loopback URL and a bearer token once', () => {
    expect(url.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(gateway.stderr()).toContain('every request needs the bearer token above');
    expect(gateway.stderr()).not.toContain(token);
  });

  it('lists and calls (approved from a second socket connection, denied) with the SDK Client over streamable HTTP', async () => {
    const client = await connectClient('http-client');
    try {
      const { tools } = await client.listTools();
      const echo = tools.find((tool) => tool.title === '[from server files] echo');
      expect(echo).toBeDefined();
      const name = echo?.name ?? '';
      policy = () => 'approve';
      const requested = log.next((e) => e.type === 'approval.requested' && e.approval.summary.serviceName === 'files' && e.approval.summary.toolName === 'echo');
      const result = await client.callTool({ name, arguments: { text: 'over http' } });
      expect(text(result)).toBe('over http');
      expect(((await requested) as Requested).approval.requester.clientId).toMatch(/^client-\d+ \(mcp:http-client\)$/);
      policy = () => 'deny';
      const denied = await client.callTool({ name, arguments: { text: 'no' } });
      expect(denied.isError).toBe(true);
      expect(text(denied)).toMatch(/^APPROVAL_DENIED: /);
    } finally {
      policy = () => 'approve';
      await client.close();
    }
  });

  it('sends list_changed to an HTTP session when a service is activated', async () => {
    const client = await connectClient('http-watcher');
    try {
      const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
      const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      await client.listTools();
      await registerScenario(admin, 'extra', ['--tools', '1']);
      await activate(admin, 'extra');
      await changed;
      expect((await client.listTools()).tools.map((tool) => tool.title)).toContain('[from server extra] tool-0');
    } finally {
      await client.close();
    }
  });

  it('refuses a request without the token, with a wrong token, a foreign Host or a foreign Origin', async () => {
    const host = `127.0.0.1:${url.port}`;
    expect(await rawStatus({ Host: host, Authorization: `Bearer ${token}` })).toBe(200);
    expect(await rawStatus({ Host: host })).toBe(401);
    expect(await rawStatus({ Host: host, Authorization: `Bearer ${'x'.repeat(43)}` })).toBe(401);
    expect(await rawStatus({ Host: `evil.example:${url.port}`, Authorization: `Bearer ${token}` })).toBe(403);
    expect(await rawStatus({ Host: host, Origin: 'http://evil.example', Authorization: `Bearer ${token}` })).toBe(403);
    expect(await rawStatus({ Host: host, Authorization: `Bearer ${token}` }, '/other')).toBe(404);
    await expect(connectClient('no-token', 'wrong')).rejects.toThrow();
    expect(files.connection.status).toBe('active');
  });

  it('serves 40 clients that connect and close one after another (no DELETE), keeping a session whose call waits', async () => {
    // A call waiting for its approval: its session must outlive the churn below.
    policy = () => null;
    const waiting = await connectClient('waiting-client');
    try {
      const name = (await waiting.listTools()).tools.find((tool) => tool.title === '[from server files] echo')?.name ?? '';
      const requested = log.next((e) => e.type === 'approval.requested' && /\(mcp:waiting-client\)$/.test(e.approval.requester.clientId));
      const call = waiting.callTool({ name, arguments: { text: 'still here' } });
      // Awaited below; if the session were lost, that await reports it (not an unhandled rejection meanwhile).
      call.catch(() => undefined);
      const approval = ((await requested) as Requested).approval;
      // The SDK Client's close() sends no DELETE: before, the 33rd session got 503.
      for (let i = 0; i < 40; i++) {
        const client = await connectClient(`churn-${i}`);
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(name);
        await client.close();
      }
      await admin.call('approvals.respond', { id: approval.id, decision: 'approve' });
      expect(text(await call)).toBe('still here');
    } finally {
      policy = () => 'approve';
      await waiting.close();
    }
  }, 120_000);

  it('keeps to 32 sessions under a burst of 60 initialize requests at once: the rest are answered 503', async () => {
    const statuses = await Promise.all(Array.from({ length: 60 }, () => rawStatus({ Authorization: `Bearer ${token}`, Host: url.host })));
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    // Each session is one daemon client: never more than 32 of them, with this test's two (admin, approver).
    const clients = await until('at most 34 daemon clients', async () => (await admin.call('daemon.status')).counts.clients, (n) => n <= 34, { everyMs: 100 });
    expect(clients).toBeLessThanOrEqual(34);
  });

  it('stops on Ctrl-C: exit 130', async () => {
    expect(await gateway.interrupt()).toBe(130);
    expect(gateway.stderr()).toContain('MCP gateway stopped');
  });
});
