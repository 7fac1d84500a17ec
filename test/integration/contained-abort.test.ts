import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runNpm } from '../../src/install/index.js';
import { Sandboxes } from '../../src/mcp/sandbox/sandboxes.js';
import { StderrTail } from '../../src/mcp/stderr-tail.js';
import { StdioTransport } from '../../src/mcp/stdio-transport.js';
import { storedService } from '../unit/mcp/in-memory.js';
import { describeSandbox } from '../helpers/sandbox.js';
import { within } from '../helpers/wait.js';
import { tempDir } from '../helpers/wispd.js';

/**
 * An install cancelled the moment npm starts (issue 43: installs.test's cancel hung 2 runs in
 * 27 under load). bubblewrap killed while it was still making the sandbox left the sandbox's
 * init running in a session of its own (its --die-with-parent did not hold), so npm held
 * the pipes and the attempt never ended. Each run here is aborted as soon as bwrap has a pid:
 * it must end, and nothing it started may be left. A sandboxed service stopped as it starts
 * (deleted, disabled or the daemon stopping during its activation) is the same case.
 */

const home = tempDir('wisp-cab-');
afterAll(() => home.remove());

/** Live processes whose command line holds `marker`. */
/** Each live process whose command line holds `marker`, as `pid <state> ppid P pgid G <program>`, so a red run says which it was. */
function runningWith(marker: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) {
        const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        found.push(`${entry} ${state ?? '?'} ppid ${ppid ?? '?'} pgid ${pgid ?? '?'} ${cmdline.split('\0')[0] ?? ''}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describeSandbox('a contained run aborted as it starts', () => {
  it('ends, with the whole sandbox gone, at every moment of bwrap\'s set-up', async () => {
    const sandboxes = new Sandboxes();
    const cwd = path.join(home.path, 'work');
    const npmHome = path.join(home.path, 'home');
    mkdirSync(cwd, { recursive: true });
    mkdirSync(npmHome, { recursive: true });
    const marker = `wisp-contained-abort-${process.pid}`;
    // Aborted at once, then a little later each time: the kill lands at each step of bwrap's set-up.
    for (let i = 0; i < 24; i++) {
      const container = await sandboxes.contain(
        { command: process.execPath, args: ['-e', `setInterval(() => {}, 1000) // ${marker}`], cwd, home: npmHome, write: [], read: [], egress: null, proxyArgs: () => [], onRefused: () => undefined },
        { socketDir: home.path, label: 'test' },
      );
      expect(container.infoFd).toBe(true);
      const abort = new AbortController();
      const exit = runNpm(
        { command: container.command, args: container.args, infoFd: container.infoFd },
        {
          cwd,
          env: { PATH: '/usr/bin:/bin' },
          signal: abort.signal,
          onSpawn: () => {
            if (i === 0) abort.abort();
            else setImmediate(() => setTimeout(() => abort.abort(), i % 8));
          },
        },
      );
      const ended = await within(`run ${i} to end once aborted`, exit);
      expect(ended.exitCode === 0, `run ${i}`).toBe(false);
      await container.close();
      expect(runningWith(marker), `run ${i} left processes`).toEqual([]);
    }
  });

  it('a sandboxed service stopped as it starts is gone with its whole sandbox, forced or not', async () => {
    const host = await new Sandboxes().get();
    const cwd = path.join(home.path, 'service');
    mkdirSync(cwd, { recursive: true });
    const marker = `wisp-service-abort-${process.pid}`;
    const args = ['-e', `process.on('SIGTERM', () => {}); setInterval(() => {}, 1000) // ${marker}`];
    for (let i = 0; i < 16; i++) {
      const launch = await host.wrap('abort-svc', storedService('abort-svc', { command: process.execPath, args, cwd }), { enabled: true, read: [], write: [], net: { mode: 'none' } }, { command: process.execPath, args, cwd, env: { PATH: '/usr/bin:/bin', HOME: home.path } }, undefined);
      const transport = new StdioTransport(launch, { maxFrameBytes: 1024 * 1024, maxFrameNesting: 512, ladder: { stdinGraceMs: 50, termGraceMs: 50 }, stderr: new StderrTail(4096) });
      await transport.start();
      if (i % 4 !== 0) await new Promise((resolve) => setTimeout(resolve, i % 4));
      await within(`service run ${i} to stop`, transport.stop(i % 2 === 0));
      expect(runningWith(marker), `service run ${i} left processes`).toEqual([]);
    }
  });
});
