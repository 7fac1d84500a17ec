import { afterAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service } from '../../src/core/index.js';
import { activate, pidOf, registerScenario } from '../helpers/services.js';
import { isRunning, killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

/**
 * Misbehaving MCP servers, all at once, while a well-behaved one takes a stream of calls:
 * one crashes mid-call, one hangs, one floods stderr, one answers with a frame over 1 MB,
 * one leaves a grandchild behind. Every call must end in a reported outcome, the good
 * calls must all succeed, and no process may outlive its service.
 */
const GOOD_CALLS = process.env.WISP_STRESS === '1' ? 2000 : 200;
const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

describe('misbehaving servers under load', () => {
  it('fails each bad call cleanly, keeps the good ones working, and leaves no orphan process', async () => {
    const daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200'] });
    const admin = await daemon.connect();
    const approver = await daemon.connect();
    approver.onEvent((event) => {
      if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
    });
    await approver.call('events.subscribe', {});

    const names = ['good', 'crasher', 'hanger', 'flooder', 'huge', 'spawner'] as const;
    const services: Record<string, Service> = {};
    for (const name of names) {
      // The hanger's limit covers its activation too: ample for that on a loaded machine.
      // The grandchild's pid as the server reports it is the host's only unsandboxed.
      await registerScenario(admin, name, ['--call-tools', ...(name === 'spawner' ? ['--grandchild'] : [])], { ...(name === 'hanger' ? { timeoutMs: 8000 } : {}), ...(name === 'spawner' ? { sandbox: NO_SANDBOX } : {}) });
      const service = await activate(admin, name);
      services[name] = service;
      expect(service.connection.status, name).toBe('active');
    }
    const pids = names.map((name) => pidOf(services[name] as Service));
    const grandchild = Number(/grandchild pid (\d+)/.exec((await admin.call('services.logs', { name: 'spawner' })).stderr)?.[1]);
    expect(isRunning(grandchild)).toBe(true);

    const clients: WispClient[] = await Promise.all(Array.from({ length: 4 }, () => daemon.connect()));
    const call = (client: WispClient, service: string, toolName: string, args: Record<string, unknown> = {}) =>
      client.call('tools.call', { serviceId: services[service]?.id ?? '', toolName, arguments: args }).then(
        (result) => ({ ok: true as const, text: result.text }),
        (error: unknown) => ({ ok: false as const, code: (error as { code?: string }).code ?? 'UNKNOWN' }),
      );
    const good = Array.from({ length: GOOD_CALLS }, (_, i) => call(clients[i % clients.length] as WispClient, 'good', 'echo', { text: `call-${i}` }));
    const bad = {
      crash: call(admin, 'crasher', 'crash'),
      hang: call(admin, 'hanger', 'hang'),
      flood: call(admin, 'flooder', 'flood', { mb: 8 }),
      huge: call(admin, 'huge', 'big', { chars: 2 * 1024 * 1024 }),
      spawner: call(admin, 'spawner', 'echo', { text: 'still fine' }),
    };

    const goodResults = await Promise.all(good);
    expect(goodResults.filter((r) => !r.ok)).toEqual([]);
    expect(goodResults.map((r) => (r.ok ? r.text : '')).every((text, i) => text === `call-${i}`)).toBe(true);
    expect(await bad.crash).toEqual({ ok: false, code: 'SERVER_EXITED' });
    expect(await bad.hang).toEqual({ ok: false, code: 'TIMEOUT' });
    expect(await bad.flood).toEqual({ ok: true, text: 'flooded' });
    expect(await bad.huge).toEqual({ ok: false, code: 'FRAME_TOO_LARGE' });
    expect(await bad.spawner).toEqual({ ok: true, text: 'still fine' });

    const states = Object.fromEntries((await admin.call('services.list')).services.map((s) => [s.name, s.connection.status === 'failed' ? s.connection.code : s.connection.status]));
    expect(states).toEqual({ good: 'active', crasher: 'SERVER_EXITED', hanger: 'TIMEOUT', flooder: 'active', huge: 'FRAME_TOO_LARGE', spawner: 'active' });
    // The stderr flood was drained and bounded, not kept whole.
    expect((await admin.call('services.logs', { name: 'flooder' })).droppedChars).toBeGreaterThan(7 * 1024 * 1024);
    expect((await admin.call('approvals.list')).approvals).toEqual([]);

    for (const name of names) await admin.call('services.disable', { name });
    for (const pid of [...pids, grandchild]) expect(isRunning(pid), `pid ${pid}`).toBe(false);
    expect((await admin.call('daemon.status')).counts.enabledServices).toBe(0);
    await Promise.all(clients.map((c) => c.close()));
    await admin.call('daemon.shutdown');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
