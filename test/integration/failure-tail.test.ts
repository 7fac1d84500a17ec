import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';
import type { WispClient } from '../../src/control/client.js';
import { registerScenario } from '../helpers/services.js';

/**
 * Issue 37: an activation that fails says why where it failed. A real server writes 25
 * lines to stderr, the last one naming a secret it was given, and exits during initialize:
 * `wispctl mcp activate` and `mcp show` print its last 20 lines, the secret redacted, and the
 * command that follows its log.
 */

const SECRET = 'canary-5e4d3c2b1a-do-not-print';
const home = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(home.path);
  client = await daemon.connect();
  await registerScenario(client, 'crashy', ['--exit-on-init', '3', '--stderr-lines', '25']);
  await client.call('services.setEnv', { name: 'crashy', mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
}, 60_000);

afterAll(async () => {
  await client.call('daemon.shutdown').catch(() => undefined);
  await client.close();
  await daemon.exited;
  killLeftovers();
  home.remove();
});

const TAIL = [
  'the last 20 stderr lines of crashy:',
  ...Array.from({ length: 19 }, (_, i) => `  starting: step ${i + 7} of 25`),
];

describe('a failed activation says why, where it failed', () => {
  it('wispctl mcp activate prints the last stderr lines, redacted, and how to follow the log', async () => {
    const run = await ctl('mcp', 'activate', 'crashy', '--yes');
    expect(run.code).not.toBe(0);
    expect(run.stdout).toMatch(/^crashy: failed SERVER_EXITED: /);
    const lines = run.stderr.trimEnd().split('\n');
    const at = lines.indexOf(TAIL[0] ?? '');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines.slice(at, at + 20)).toEqual(TAIL);
    expect(lines[at + 20]).toMatch(/^ {2}fatal: cannot start with key \[REDACTED/);
    expect(lines[at + 21]).toBe('follow its log: wispctl mcp logs crashy -f');
    expect(run.stderr).not.toContain(SECRET);
    expect(run.stderr).not.toContain('step 6 of 25');
  });

  it('wispctl mcp show says it too; --json stays the service', async () => {
    const show = await ctl('mcp', 'show', 'crashy');
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`${TAIL.join('\n')}\n`);
    expect(show.stdout).toContain('follow its log: wispctl mcp logs crashy -f\n');
    expect(show.stdout).not.toContain(SECRET);
    const json = await ctl('mcp', 'show', 'crashy', '--json');
    expect((JSON.parse(json.stdout) as { connection: { status: string } }).connection.status).toBe('failed');
  });
});
