import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAME_PATTERN } from '../../src/core/index.js';
import { registerScenario } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, wispctlBin } from '../helpers/wispd.js';

/**
 * Issue 18: `wispctl completion bash|zsh|fish`. The bash script is sourced in a real bash and
 * asked what it completes, the way bash's programmable completion calls it (COMP_WORDS,
 * COMP_CWORD, then the function `complete -F` names).
 */

const home = tempDir();
let script: string;

beforeAll(async () => {
  const run = await runWispctl(['completion', 'bash']);
  expect(run.code).toBe(0);
  script = path.join(home.path, 'wispctl.bash');
  writeFileSync(script, run.stdout);
});
afterAll(() => home.remove());

/** What bash completes for the words typed (the last one is the word being completed). */
function complete(...typed: string[]): string[] {
  return completeWith(process.env, typed);
}

function completeWith(env: NodeJS.ProcessEnv, typed: string[]): string[] {
  const driver = [
    'source "$1"; shift',
    'spec=$(complete -p wispctl); fn=${spec##*-F }; fn=${fn%% *}',
    'COMP_WORDS=(wispctl "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()',
    '"$fn"; printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', driver, 'bash', script, ...typed], { encoding: 'utf8', env });
  return out.split('\n').filter((line) => line !== '');
}

describe('wispctl completion bash', () => {
  it('registers a completion function for wispctl', () => {
    expect(execFileSync('bash', ['--norc', '--noprofile', '-c', 'source "$1"; complete -p wispctl', 'bash', script], { encoding: 'utf8' })).toMatch(/^complete .*-F _wispctl wispctl$/m);
  });

  it('completes the commands, then each command\'s subcommands', () => {
    expect(complete('')).toEqual(expect.arrayContaining(['status', 'mcp', 'approvals', 'sessions', 'install', 'completion', 'help']));
    expect(complete('st')).toEqual(['status']);
    // Every completion starts with what was typed, and the commands that do are all there.
    const a = complete('mcp', 'a');
    expect(a).toEqual(expect.arrayContaining(['activate', 'add', 'add-remote']));
    expect(a.filter((word) => !word.startsWith('a'))).toEqual([]);
    expect(complete('mcp', 'env', '')).toEqual(['set', 'list', 'clear', 'carry-over', 'help']);
    expect(complete('install', 'c')).toEqual(['cancel']);
  });

  it('completes the options of the command typed so far, and the global ones', () => {
    const add = complete('mcp', 'add', '--');
    expect(add).toEqual(expect.arrayContaining(['--cwd', '--args-json', '--timeout-ms', '--help', '--json', '--socket', '--output']));
    expect(add).not.toContain('--all');
    expect(complete('approvals', '--w')).toEqual(['--watch']);
  });

  it('skips an option\'s value while reading the command path, and offers an option\'s choices', () => {
    const l = complete('--socket', '/tmp/s.sock', 'mcp', 'l');
    expect(l).toEqual(expect.arrayContaining(['list', 'login', 'logout', 'logs']));
    expect(l.filter((word) => !word.startsWith('l'))).toEqual([]);
    expect(complete('mcp', 'list', '-o', '')).toEqual(['json', 'wide']);
    expect(complete('completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('status', '')).toEqual([]);
  });

  it('zsh and fish scripts come from the same tree; an unknown shell is a usage error', async () => {
    const zsh = await runWispctl(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef wispctl/);
    expect(zsh.stdout).toContain('"mcp env") echo "set list clear carry-over help"');
    const fish = await runWispctl(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c wispctl -f -a '(__wispctl_complete)'");
    const bad = await runWispctl(['completion', 'powershell']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are bash, zsh, fish/);
  });
});

describe('service names (issue 37)', () => {
  it('where a command takes a registered service, its names are offered, asked of the daemon the line names', async () => {
    const daemon = await startWispd(path.join(home.path, 'data'));
    const client = await daemon.connect();
    try {
      await registerScenario(client, 'files');
      await registerScenario(client, 'fetcher');
      await registerScenario(client, 'git');
      // The script runs `wispctl` as typed: here, a wispctl on PATH that is this build's.
      const bin = path.join(home.path, 'bin');
      mkdirSync(bin);
      writeFileSync(path.join(bin, 'wispctl'), `#!/bin/sh\nexec '${process.execPath}' '${wispctlBin}' "$@"\n`, { mode: 0o755 });
      const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
      const at = (...typed: string[]) => completeWith(env, ['--socket', daemon.socket, ...typed]);
      expect(at('mcp', 'show', 'f').sort()).toEqual(['fetcher', 'files']);
      expect(at('mcp', 'activate', '')).toEqual(expect.arrayContaining(['files', 'fetcher', 'git']));
      expect(at('mcp', 'env', 'list', 'g')).toEqual(['git']);
      // Only the service argument: not the tool after it, not a command naming a new service, not elsewhere.
      expect(at('mcp', 'call', 'files', 'f')).toEqual([]);
      expect(at('mcp', 'add', 'f')).toEqual([]);
      expect(at('status', '')).toEqual([]);
      // The names are the daemon's, one per line, from mcp list --names.
      expect((await runWispctl(['--socket', daemon.socket, 'mcp', 'list', '--names'])).stdout.split('\n').filter(Boolean).sort()).toEqual(['fetcher', 'files', 'git']);
      // Only what the daemon accepts as a name becomes a word (compgen -W would expand anything else).
      expect(readFileSync(script, 'utf8')).toContain(`[[ $name =~ ${SERVICE_NAME_PATTERN} ]]`);
      // No daemon: no names, no error on the terminal.
      expect(completeWith(env, ['--socket', path.join(home.path, 'none.sock'), 'mcp', 'show', 'f'])).toEqual([]);
    } finally {
      await client.call('daemon.shutdown');
      await daemon.exited;
      killLeftovers();
    }
  });
});
