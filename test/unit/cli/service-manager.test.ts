import { mkdtempSync, rmSync, statSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planUnit, writeUnit } from '../../../src/cli/service-manager.js';

/** Issue 37: `daemon install` on macOS wrote a plist whose log directory did not exist, so launchd could not start the job. */
describe('the user service unit', () => {
  let home = '';
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('launchd: the log directory the plist names is made (0700) before the plist is written', async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'wisp-unit-'));
    const plan = await planUnit({ platform: 'darwin', env: {}, homedir: home, uid: 501, nodePath: '/usr/local/bin/node', daemonArgs: [] });
    const logs = path.join(home, 'Library', 'Logs', 'Wisp');
    expect(plan.directories).toEqual([logs]);
    expect(plan.content).toContain(`<string>${path.join(logs, 'wispd.log')}</string>`);
    expect(await writeUnit(plan)).toEqual([logs]);
    expect(statSync(logs).mode & 0o777).toBe(0o700);
    expect(readFileSync(plan.file, 'utf8')).toBe(plan.content);
    // Again: nothing to make, the unit rewritten.
    expect(await writeUnit(plan)).toEqual([]);
  });

  it('systemd: journald keeps the log, so nothing is made but the unit', async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'wisp-unit-'));
    const plan = await planUnit({ platform: 'linux', env: {}, homedir: home, uid: 1000, nodePath: '/usr/bin/node', daemonArgs: [] });
    expect(plan.directories).toEqual([]);
    expect(await writeUnit(plan)).toEqual([]);
    expect(existsSync(path.join(home, '.config', 'systemd', 'user', 'wispd.service'))).toBe(true);
  });
});
