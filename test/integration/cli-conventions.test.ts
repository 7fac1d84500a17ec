import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { scenarioServer } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/** Issue 18: what a newcomer sees when using wispctl wrongly, or reaching for the usual words. */

const home = tempDir();
let daemon: RunningDaemon;
const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'));
});
afterAll(async () => {
  const client = await daemon.connect();
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('usage (bug 11)', () => {
  it('no arguments: a short usage on stderr, one line per command, exit 2', async () => {
    const run = await runWispctl([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(30);
    expect(lines).toContain('  status     show the daemon');
    expect(lines).toContain('  mcp        manage MCP server registrations');
    expect(run.stderr).toContain('wispctl help errors');
    expect(run.stderr).not.toContain('SERVICE_NOT_FOUND');
  });

  it('an unknown command: one line naming it, with the close command when there is one, exit 2', async () => {
    const typo = await runWispctl(['stauts']);
    expect(typo).toMatchObject({ code: 2, stdout: '', stderr: "error: unknown command 'stauts'; did you mean wispctl status?\n" });
    const unknown = await runWispctl(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stderr: "error: unknown command 'frobnicate'; wispctl --help lists the commands\n" });
    const sub = await runWispctl(['mcp', 'actvate', 'x']);
    expect(sub).toMatchObject({ code: 2, stderr: "error: unknown command 'actvate'; did you mean wispctl mcp activate?\n" });
  });

  it('a usage error points at the command\'s --help instead of printing it all', async () => {
    const run = await runWispctl(['mcp', 'add']);
    expect(run).toMatchObject({ code: 2, stderr: "error: missing required argument 'name'\n(wispctl mcp add --help shows how to use it)\n" });
  });

  it('the error codes are in wispctl help errors, aligned, and not in --help', async () => {
    const help = await runWispctl(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).not.toContain('SERVICE_NOT_FOUND');
    expect(help.stdout).toContain('Error codes: wispctl help errors');
    for (const args of [['help', 'errors'], ['errors']]) {
      const run = await runWispctl(args);
      expect(run.code, args.join(' ')).toBe(0);
      const rows = run.stdout.split('\n').filter((line) => /^[A-Z_]{4,} +\d/.test(line));
      expect(rows.map((row) => row.split(' ')[0])).toEqual([...ERROR_CODES]);
      // Aligned: every exit status starts in the same column.
      expect(new Set(rows.map((row) => /\s(\d+)\s/.exec(row)?.index)).size).toBe(1);
    }
  });

  it('mcp enable is mcp activate: the same trust question', async () => {
    expect((await ctl('mcp', 'add', 'scen', '--', process.execPath, scenarioServer)).code).toBe(0);
    const refused = await ctl('mcp', 'enable', 'scen');
    expect(refused.stderr).toContain('not a terminal, so nobody can confirm: pass --yes');
    expect(refused.stderr).toContain(scenarioServer);
    expect(refused.code).not.toBe(0);
    const enabled = await ctl('mcp', 'enable', 'scen', '--yes');
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toMatch(/^scen: active/);
    expect((await ctl('mcp', 'disable', 'scen')).code).toBe(0);
  });
});
