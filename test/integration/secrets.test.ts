import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { activate, pidOf, registerScenario, scenarioServer } from '../helpers/services.js';
import { sweptFiles } from '../helpers/canary.js';
import { environOf, killLeftovers, onLinux, RawClient, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;

beforeAll(async () => {
  // No D-Bus session in this daemon's environment: the keychain is unavailable.
  daemon = await startWispd(home.path, { args: ['--stop-grace-ms', '200', '--log-level', 'trace'] });
  client = await daemon.connect();
});

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('service secrets', () => {
  it('refuses keychain storage when the keychain is unavailable, with nothing written in plain text', async () => {
    const service = await registerScenario(client, 'no-keychain');
    const error = await client
      .call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'API_KEY', value: 'never-in-plain-text-7731', storage: 'keychain' }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'KEYCHAIN_UNAVAILABLE', message: expect.stringContaining('session') });
    expect((await client.call('services.get', { id: service.id })).service).toMatchObject({ env: [], configVersion: 1 });
    for (const { file, text } of sweptFiles(home.path, ['mcp-servers.json'])) expect(text, file).not.toContain('never-in-plain-text-7731');
    expect(daemon.output()).not.toContain('never-in-plain-text-7731');
    await client.call('services.delete', { id: service.id });
  });

  it.runIf(onLinux)('gives each server only its own variables (their environments, read from /proc)', async () => {
    const a = await registerScenario(client, 'own-a');
    const b = await registerScenario(client, 'own-b');
    await client.call('services.setEnv', { id: a.id, mode: 'replace', variables: [{ name: 'A_TOKEN', value: 'value-of-a-5521', storage: 'session' }] });
    await client.call('services.setEnv', { id: b.id, mode: 'replace', variables: [{ name: 'B_TOKEN', value: 'value-of-b-9917', storage: 'session' }] });
    const pidA = pidOf(await activate(client, 'own-a'));
    const pidB = pidOf(await activate(client, 'own-b'));
    expect(environOf(pidA)).toContain('A_TOKEN=value-of-a-5521');
    expect(environOf(pidA)).not.toContain('value-of-b-9917');
    expect(environOf(pidB)).toContain('B_TOKEN=value-of-b-9917');
    expect(environOf(pidB)).not.toContain('value-of-a-5521');
    await client.call('services.delete', { id: a.id });
    await client.call('services.delete', { id: b.id });
  });

  it('keeps values write-only, starts each server with its variables, and edits them by upsert or replace', async () => {
    const a = await registerScenario(client, 'env-a');
    const b = await registerScenario(client, 'env-b');
    const setA = await client.call('services.setEnv', { id: a.id, mode: 'replace', variables: [{ name: 'A_TOKEN', value: 'value-of-a-5521', storage: 'session' }] });
    expect(setA.service).toMatchObject({ env: [{ name: 'A_TOKEN', storage: 'session' }], configVersion: 2, enabled: false });
    expect(JSON.stringify(setA)).not.toContain('value-of-a-5521');
    await client.call('services.setEnv', { id: b.id, mode: 'replace', variables: [{ name: 'B_TOKEN', value: 'value-of-b-9917', storage: 'session' }] });
    expect((await activate(client, 'env-a')).connection.status).toBe('active');
    expect((await activate(client, 'env-b')).connection.status).toBe('active');
    // upsert keeps the others; replace with an empty list clears them all.
    const upserted = await client.call('services.setEnv', { id: a.id, mode: 'upsert', variables: [{ name: 'A_OTHER', value: 'x', storage: 'session' }] });
    expect(upserted.service.env.map((v) => v.name)).toEqual(['A_TOKEN', 'A_OTHER']);
    expect(upserted.service.connection.status).toBe('disabled');
    const cleared = await client.call('services.setEnv', { id: a.id, mode: 'replace', variables: [] });
    expect(cleared.service.env).toEqual([]);
    await client.call('services.delete', { id: a.id });
    await client.call('services.delete', { id: b.id });
  });

  it('never carries values to an edited command silently', async () => {
    const service = await registerScenario(client, 'rebound');
    await client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'TOKEN', value: 'bound-value', storage: 'session' }] });
    const { service: edited } = await client.call('services.update', { id: service.id, set: { args: [scenarioServer, '--tools', '1'] } });
    await expect(client.call('services.activate', { id: service.id, configVersion: edited.configVersion })).rejects.toMatchObject({
      code: 'SECRET_BINDING_CHANGED',
      details: { names: ['TOKEN'] },
    });
    expect((await client.call('services.get', { id: service.id })).service.connection.status).toBe('disabled');
    await expect(client.call('services.carryOverEnv', { id: service.id, configVersion: 1 })).rejects.toMatchObject({ code: 'APPROVAL_STALE' });
    await client.call('services.carryOverEnv', { id: service.id, configVersion: edited.configVersion });
    expect((await activate(client, 'rebound')).connection.status).toBe('active');
    await client.call('services.delete', { id: service.id });
  });

  it('asks for session values again after a restart', async () => {
    const dir = tempDir();
    try {
      const first = await startWispd(dir.path, { args: ['--stop-grace-ms', '100'] });
      const c1 = await first.connect();
      const service = await registerScenario(c1, 'forgetful');
      await c1.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'SESSION_ONLY', value: 'v', storage: 'session' }] });
      await c1.call('daemon.shutdown');
      await first.exited;
      const second = await startWispd(dir.path, { args: ['--stop-grace-ms', '100'] });
      const c2 = await second.connect();
      const { service: again } = await c2.call('services.get', { id: service.id });
      expect(again.env).toEqual([{ name: 'SESSION_ONLY', storage: 'session' }]);
      await expect(c2.call('services.activate', { id: service.id, configVersion: again.configVersion })).rejects.toMatchObject({
        code: 'SECRET_MISSING',
        details: { names: ['SESSION_ONLY'] },
        message: expect.stringContaining('SESSION_ONLY'),
      });
      await c2.call('daemon.shutdown');
      await second.exited;
    } finally {
      dir.remove();
    }
  });

  it('canary: the value reaches the child and nowhere else', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const watcher = await RawClient.connect(daemon.socket);
    watcher.request(1, 'events.subscribe', {});
    const actor = await RawClient.connect(daemon.socket);
    let id = 10;
    const ask = async (method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: unknown }> => {
      const mine = ++id;
      actor.request(mine, method, params);
      for (;;) {
        const found = (await actor.waitFor(actor.received.length + 1)).find((m) => (m as { id?: number }).id === mine);
        if (found !== undefined) return found as { result?: Record<string, unknown> };
      }
    };
    actor.request(1, 'events.subscribe', {});
    const registered = await ask('services.register', { name: 'canary', command: process.execPath, args: [scenarioServer, '--print-env'] });
    const serviceId = (registered.result?.service as { id: string }).id;
    await ask('services.setEnv', { id: serviceId, mode: 'replace', variables: [{ name: 'WISP_CANARY', value: canary, storage: 'session' }] });
    const activated = await ask('services.activate', { id: serviceId, configVersion: 2 });
    const connection = (activated.result?.service as { connection: { status: string; pid: number } }).connection;
    expect(connection.status).toBe('active');
    // The approved place, the child's own environment: its env tool below shows the value
    // there (redacted on the way out); on Linux the next test reads it from /proc too.

    // Call the tool that returns its environment; the actor approves its own call.
    const tools = await ask('tools.list', { serviceId });
    const envTool = (tools.result?.tools as { name: string; modelName: string }[]).find((t) => t.name === 'env-values');
    id += 1;
    const callId = id;
    actor.request(callId, 'tools.call', { modelName: envTool?.modelName, arguments: {} });
    let approvalId: string | undefined;
    while (approvalId === undefined) {
      const messages = await actor.waitFor(actor.received.length + 1);
      approvalId = (messages.find((m) => (m as { params?: { type?: string } }).params?.type === 'approval.requested') as { params: { approval: { id: string } } } | undefined)?.params.approval.id;
    }
    await ask('approvals.respond', { id: approvalId, decision: 'approve' });
    let callResult: { result?: { text: string; structuredContent: { env: Record<string, string> } } } | undefined;
    while (callResult === undefined) {
      callResult = (await actor.waitFor(actor.received.length + 1)).find((m) => (m as { id?: number }).id === callId) as typeof callResult;
    }
    expect(callResult.result?.text).toContain('"WISP_CANARY":"[REDACTED:WISP_CANARY]"');
    expect(callResult.result?.structuredContent.env.WISP_CANARY).toBe('[REDACTED:WISP_CANARY]');

    // Everything a user can look at.
    await ask('services.list', {});
    await ask('services.get', { id: serviceId });
    await ask('daemon.status', {});
    const logs = await ask('services.logs', { id: serviceId });
    expect(logs.result?.stderr).toContain('env: WISP_CANARY=[REDACTED:WISP_CANARY]');
    await ask('approvals.list', { all: true });
    await ask('tools.list', {});
    await ask('rpc.discover', {});
    await ask('services.disable', { id: serviceId });
    watcher.request(2, 'daemon.status');
    await watcher.waitFor(watcher.received.length + 1);

    // Nowhere else: not in what any client received, not in the data dir, not in the daemon's log.
    expect(actor.raw).not.toContain(canary);
    expect(watcher.raw).not.toContain(canary);
    for (const { file, text } of sweptFiles(home.path, ['mcp-servers.json', 'audit.jsonl'])) expect(text, file).not.toContain(canary);
    expect(daemon.output()).not.toContain(canary);
    actor.close();
    watcher.close();
  });

  it.runIf(onLinux)('canary: the value is in the child\'s own environment (read from /proc)', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const service = await registerScenario(client, 'canary-environ');
    await client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [{ name: 'WISP_CANARY', value: canary, storage: 'session' }] });
    expect(environOf(pidOf(await activate(client, 'canary-environ')))).toContain(`WISP_CANARY=${canary}`);
    await client.call('services.delete', { id: service.id });
  });
});
