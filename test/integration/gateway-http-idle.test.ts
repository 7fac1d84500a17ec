import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { httpGateway, type HttpGateway } from '../helpers/gateway.js';
import { EventLog, activate, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import { until } from '../helpers/wait.js';

/**
 * Issue 16: `wispctl mcp serve --http --idle-timeout SECONDS` closes a session left idle (no
 * request running, no stream open), as clients that never send DELETE leave theirs, and keeps
 * one whose call waits for its approval and one whose client listens on its GET stream.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let log: EventLog;
let gateway: HttpGateway;
let echo: string;

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

/** Socket connections the daemon has now (each gateway session holds one). */
async function clients(): Promise<number> {
  return (await admin.call('daemon.status')).counts.clients;
}


beforeAll(async () => {
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '300'] });
  admin = await daemon.connect();
  log = await EventLog.follow(admin);
  await registerScenario(admin, 'files');
  await activate(admin, 'files');
  echo = 'files__echo';
  // 3 s: short for the test, long enough that a loaded machine does not expire a session between two of its requests.
  gateway = await httpGateway(daemon.socket, ['--idle-timeout', '3']);
}, 60_000);

afterAll(async () => {
  gateway.child.kill('SIGKILL');
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('wispctl mcp serve --http --idle-timeout', () => {
  it('closes an idle session (its next request: 404, session not found) and keeps one whose call waits, and one that listens', async () => {
    const before = await clients();
    // The waiting and the quiet client do not open the GET stream: only their own requests keep
    // them. The waiting one starts its call at once, before it could be idle for the timeout.
    const waiting = await gateway.connect('idle-waiting', { listen: false });
    const asked = log.next((e) => e.type === 'approval.requested' && /\(mcp:idle-waiting\)$/.test(e.approval.requester.clientId));
    const call = waiting.callTool({ name: echo, arguments: { text: 'kept while it waits' } });
    call.catch(() => undefined);
    // Connected before the quiet one: idle for longer than it when it is closed.
    const listening = await gateway.connect('idle-listening');
    const quiet = await gateway.connect('idle-quiet', { listen: false });
    try {
      const approval = ((await asked) as Requested).approval;

      // The quiet session's daemon connection goes once it has been idle for the timeout; the others stay.
      await until('the idle session to be closed', clients, (n) => n === before + 2);
      await expect(quiet.listTools()).rejects.toMatchObject({ code: 404, message: expect.stringContaining('session not found: initialize again') as unknown });

      // The waiting call was idle as long, and still gets its answer.
      await admin.call('approvals.respond', { id: approval.id, decision: 'approve' });
      expect(text(await call)).toBe('kept while it waits');
      expect((await listening.listTools()).tools.map((t) => t.name)).toContain(echo);
    } finally {
      await Promise.all([waiting.close(), quiet.close(), listening.close()]);
    }
  }, 60_000);

  it('takes 1 to 86400 seconds, with --http only, and says so in --help', async () => {
    const env = daemonEnv();
    const run = (...args: string[]): ReturnType<typeof runWispctl> => runWispctl(['--socket', daemon.socket, 'mcp', 'serve', ...args], { env });
    for (const bad of ['0', '86401']) {
      expect(await run('--http', '--idle-timeout', bad)).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('--idle-timeout must be between 1 and 86400 seconds (INVALID_PARAMS)') as unknown });
    }
    expect(await run('--http', '--idle-timeout', '1.5')).toMatchObject({ code: 2, stderr: expect.stringContaining('--idle-timeout must be a non-negative integer') as unknown });
    expect(await run('--idle-timeout', '60')).toMatchObject({ code: 2, stdout: '', stderr: 'wispctl: --idle-timeout goes with --http (INVALID_PARAMS)\n' });
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--idle-timeout <seconds>\s+with --http: /);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('close a session idle this long (no request running, no stream open); 1-86400, default 600');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('for --idle-timeout seconds (default 600) is closed');
  });
});
