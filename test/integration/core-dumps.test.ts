import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { disableCoreDumps } from '../../src/daemon/core-dumps.js';
import { killLeftovers, onLinux, repoRoot, startWispd, tempDir } from '../helpers/wispd.js';

// Issue 33, LOW 9: with `ulimit -c unlimited`, a crash core of wispd held the keychain secret
// six times. The daemon sets its own core limit to zero at start.

const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

/** The soft and hard core-file limits of a process, as the kernel reports them. */
function coreLimits(pid: number): string[] {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max core file size'));
  return (line ?? '').replace('Max core file size', '').trim().split(/\s+/).slice(0, 2);
}

describe.skipIf(!onLinux)('core dumps', () => {
  it('wispd started with an unlimited core limit (ulimit -c unlimited) runs with 0 soft and hard', async () => {
    const daemon = await startWispd(home.path, { wrap: ['prlimit', '--core=unlimited:unlimited'] });
    expect(coreLimits(daemon.pid)).toEqual(['0', '0']);
    const client = await daemon.connect();
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('says why when prlimit is not where it is looked for, and on a platform without it', () => {
    expect(disableCoreDumps('linux', process.pid, [path.join(repoRoot, 'no-such-dir')])).toEqual({ disabled: false, why: expect.stringContaining('prlimit not found') });
    expect(disableCoreDumps('darwin')).toEqual({ disabled: false, why: expect.stringContaining('LaunchAgent') });
  });

  it('the LaunchAgent template sets the core limit to 0, soft and hard', () => {
    const plist = readFileSync(path.join(repoRoot, 'launchd', 'dev.wisp.wispd.plist'), 'utf8');
    for (const key of ['SoftResourceLimits', 'HardResourceLimits']) expect(plist).toMatch(new RegExp(`<key>${key}</key>\\s*<dict>\\s*<key>Core</key>\\s*<integer>0</integer>`));
  });
});
