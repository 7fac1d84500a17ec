import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { MockDeepSeek, textEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { activate, registerScenario } from '../helpers/services.js';
import { daemonEnv, killLeftovers, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * SIGKILL at random moments during mixed work, across the whole data dir: registry edits,
 * settings, session transcripts, tool calls (the audit log) and install attempts. After
 * every restart each file parses and holds every write that was acknowledged.
 */
const KILLS = process.env.WISP_STRESS === '1' ? 60 : 12;
const home = tempDir();
const mock = new MockDeepSeek();
let registry: LocalRegistry;
const env = daemonEnv({ DEEPSEEK_API_KEY: 'sk-crash-test' });
let npm12Bin: string;

beforeAll(async () => {
  npm12Bin = await ensureNpm12();
  registry = await LocalRegistry.start();
  registry.hang = true; // installs start, write their record, and wait on npm: a kill finds them running
}, NPM12_SETUP_MS);
afterAll(async () => {
  killLeftovers();
  await mock.stop();
  await registry.close();
  home.remove();
});

function lines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

function jsonFiles(dir: string, suffix: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(suffix)).map((n) => path.join(dir, n)) : [];
}

describe('crash consistency of the whole data dir', () => {
  it(`keeps every file parseable and every acknowledged write, through ${KILLS} SIGKILLs during mixed work`, async () => {
    const seed = Number(process.env.WISP_CRASH_SEED ?? Date.now() % 1_000_000);
    let state = seed;
    const random = (): number => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    const modelUrl = await mock.start();
    const acked = { args: 0, sessions: new Set<string>(), calls: new Set<string>(), timeout: 0 };
    const sent = { args: 0 };

    for (let round = 0; round <= KILLS; round++) {
      const daemon: RunningDaemon = await startWispd(home.path, { env, args: ['--stop-grace-ms', '100'] });
      const client: WispClient = await daemon.connect();
      const where = `seed ${seed}, round ${round}`;

      // What the last kill left must hold every acknowledged write.
      if (round > 0) {
        const status = await client.call('daemon.status');
        expect(status.registryLoadError, where).toBeNull();
        const svc = (await client.call('services.get', { name: 'svc' })).service;
        expect(Number(svc.args[0]), where).toBeGreaterThanOrEqual(acked.args);
        expect(Number(svc.args[0]), where).toBeLessThanOrEqual(sent.args);
        acked.args = Number(svc.args[0]);
        const sessions = new Set((await client.call('sessions.list')).sessions.map((s) => s.id));
        for (const id of acked.sessions) expect(sessions.has(id), `${where}: session ${id}`).toBe(true);
        const audit = path.join(home.path, 'audit.jsonl');
        const recorded = existsSync(audit) ? (lines(audit) as { callId?: string }[]) : [];
        for (const id of acked.calls) expect(recorded.some((r) => r.callId === id), `${where}: call ${id} in the audit log`).toBe(true);
        for (const file of jsonFiles(path.join(home.path, 'sessions'), '.jsonl')) expect(() => lines(file), file).not.toThrow();
        for (const file of jsonFiles(path.join(home.path, 'mcp-installs'), '.json')) {
          const record = JSON.parse(readFileSync(file, 'utf8')) as { status: string };
          expect(record.status, `${where}: ${file}`).not.toBe('running');
        }
        const settings = (await client.call('installs.getSettings')).settings;
        expect(settings.timeoutMs, where).toBeGreaterThanOrEqual(acked.timeout);
        expect(JSON.parse(readFileSync(path.join(home.path, 'settings.json'), 'utf8'))).toMatchObject({ schemaVersion: 1 });
        expect(readdirSync(home.path).filter((n) => n.endsWith('.tmp')), where).toEqual([]);
      } else {
        await client.call('services.register', { name: 'svc', command: '/bin/true', args: ['0'] });
        await registerScenario(client, 'echo');
        await client.call('model.setSettings', { baseUrl: modelUrl, model: 'mock-model', maxRetries: 0 });
        await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 60_000 });
      }
      if (round === KILLS) {
        await client.close();
        daemon.child.kill('SIGTERM');
        await daemon.exited;
        break;
      }

      await activate(client, 'echo');
      const approver = await daemon.connect();
      approver.onEvent((event) => {
        if (event.type === 'approval.requested') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' }).catch(() => undefined);
      });
      await approver.call('events.subscribe', {});
      mock.clear();
      for (let i = 0; i < 20; i++) mock.enqueue({ events: textEvents(`answer ${i}`) });

      // Mixed work, acknowledged as it lands; the kill comes after a random number of
      // acknowledgements, while the next operation (and background task writes) are in flight.
      const killAfter = 1 + Math.floor(random() * 15);
      let acks = 0;
      let reached!: () => void;
      const killNow = new Promise<void>((resolve) => (reached = resolve));
      const ack = (): void => {
        acks += 1;
        if (acks >= killAfter) reached();
      };
      const work = async (): Promise<void> => {
        for (let i = 0; ; i++) {
          const pick = random();
          if (pick < 0.35) {
            const value = ++sent.args;
            await client.call('services.update', { name: 'svc', set: { args: [String(value)] } });
            acked.args = Math.max(acked.args, value);
          } else if (pick < 0.55) {
            const { session } = await client.call('sessions.create', { title: `s${round}-${i}` });
            acked.sessions.add(session.id);
            await client.call('sessions.send', { id: session.id, text: 'hello' });
          } else if (pick < 0.85) {
            const { service } = await client.call('services.get', { name: 'echo' });
            const result = await client.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: `r${round}-${i}` } });
            acked.calls.add(result.callId);
          } else if (pick < 0.93) {
            const timeoutMs = 60_000 + round * 100 + i;
            await client.call('installs.setSettings', { timeoutMs });
            acked.timeout = Math.max(acked.timeout, timeoutMs);
          } else {
            const { plan } = await client.call('installs.plan', { package: 'never-served', version: '1.0.0', bin: 'x', args: [`${round}-${i}`] });
            void client.call('installs.start', { planDigest: plan.digest }).catch(() => undefined);
          }
          ack();
        }
      };
      const running = work().catch(() => undefined);
      await killNow;
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      await running;
      await client.close().catch(() => undefined);
      await approver.close().catch(() => undefined);
    }
    expect(acked.calls.size + acked.sessions.size).toBeGreaterThan(0);
  }, 240_000);
});
