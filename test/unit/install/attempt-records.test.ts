import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Installer } from '../../../src/install/index.js';
import { tempDir } from '../../helpers/wispd.js';

const NOW = new Date('2025-02-03T04:05:06.000Z');
const dirs: { remove: () => void }[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

function installer(): { installer: Installer; installsDir: string } {
  const dir = tempDir();
  dirs.push(dir);
  const installsDir = path.join(dir.path, 'mcp-installs');
  mkdirSync(installsDir, { mode: 0o700 });
  const made = new Installer({
    installsDir,
    sandboxDir: path.join(dir.path, 'npm-sandbox'),
    settings: () => ({ runtimeDirs: ['/nonexistent'], registry: null, caFile: null, timeoutMs: 60_000, sandbox: true }),
    contain: () => Promise.reject(new Error('no npm runs in this test')),
    register: () => Promise.reject(new Error('no registration in this test')),
    publish: () => undefined,
    now: () => NOW,
  });
  return { installer: made, installsDir };
}

/** A record as an earlier daemon wrote it (the protocol's field names, plus schemaVersion). */
function record(digest: string, lifecycle: Record<string, unknown>): Record<string, unknown> {
  return {
    schemaVersion: 1,
    digest,
    package: 'some-server',
    version: '1.0.0',
    bin: 'some-server',
    args: [],
    registry: 'https://registry.npmjs.org/',
    directory: `/data/mcp-installs/${digest}`,
    startedAt: '2025-02-03T04:00:00.000Z',
    installScripts: [],
    lockedPackages: 3,
    runtime: { node: '/usr/bin/node', nodeVersion: 'v22.0.0', npmVersion: '12.0.0' },
    logTail: '',
    ...lifecycle,
  };
}
const write = (installsDir: string, digest: string, content: unknown): string => {
  const file = path.join(installsDir, `${digest}.json`);
  writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
  return file;
};
const digest = (n: number): string => n.toString(16).padStart(32, '0');
const ENDED = { endedAt: '2025-02-03T04:01:00.000Z', npmPid: null, serviceId: null, serviceName: null };

describe('install attempt records on disk', () => {
  it('loads records written before attempts became a union (same fields), each with its status\'s data', async () => {
    const { installer: made, installsDir } = installer();
    const failed = record(digest(1), { status: 'failed', step: 'lock', error: { code: 'INSTALL_FAILED', message: 'npm failed', problems: [{ path: 'x', problem: 'git dependency' }] }, ...ENDED });
    const succeeded = record(digest(2), { status: 'succeeded', step: 'register', error: null, endedAt: '2025-02-03T04:02:00.000Z', npmPid: null, serviceId: 'svc', serviceName: 'some-server' });
    write(installsDir, digest(1), failed);
    write(installsDir, digest(2), succeeded);
    expect(await made.load()).toEqual([]);
    expect(await made.get(digest(1))).toEqual(failed);
    expect(await made.get(digest(2))).toEqual(succeeded);
  });

  it('ends an attempt a dead daemon left running as interrupted, with the INTERRUPTED code and the step it reached', async () => {
    const { installer: made, installsDir } = installer();
    write(installsDir, digest(3), record(digest(3), { status: 'running', step: 'verify', endedAt: null, error: null, npmPid: null, serviceId: null, serviceName: null }));
    expect(await made.load()).toEqual([]);
    expect(await made.get(digest(3))).toMatchObject({
      status: 'interrupted',
      step: 'verify',
      endedAt: NOW.toISOString(),
      error: { code: 'INTERRUPTED', message: 'the daemon stopped during this install' },
      npmPid: null,
      serviceId: null,
    });
  });

  it.each([
    ['an error code outside the catalog', { status: 'failed', step: 'lock', error: { code: 'NPM_EXPLODED', message: 'boom' }, ...ENDED }],
    ['a success without its service', { status: 'succeeded', step: 'register', error: null, endedAt: '2025-02-03T04:02:00.000Z', npmPid: null, serviceId: null, serviceName: null }],
    ['a failure without its error', { status: 'failed', step: 'lock', error: null, ...ENDED }],
    ['a running attempt that has ended', { status: 'running', step: 'lock', error: null, ...ENDED }],
  ])('moves aside, intact, a record with %s', async (_kind, lifecycle) => {
    const { installer: made, installsDir } = installer();
    const content = record(digest(4), lifecycle);
    const file = write(installsDir, digest(4), content);
    const problems = await made.load();
    expect(problems).toEqual([{ file, problem: expect.stringMatching(/^fails its schema: .*: moved aside$/), movedTo: expect.stringContaining(`${file}.bad-`) }]);
    expect(existsSync(file)).toBe(false);
    expect(JSON.parse(readFileSync(problems[0]?.movedTo ?? '', 'utf8'))).toEqual(content);
    expect(await made.list()).toEqual([]);
  });
});
