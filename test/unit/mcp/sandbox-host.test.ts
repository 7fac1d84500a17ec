import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WispError } from '../../../src/core/index.js';
import { SandboxHost } from '../../../src/mcp/sandbox/host.js';
import type { SandboxProfile } from '../../../src/mcp/sandbox/profile.js';
import { storedService } from './in-memory.js';

/**
 * The sandbox host's refusals and its macOS branch, on this Linux machine: the platform is
 * injected, and so are the places it looks for its launchers. sandbox-exec itself cannot run
 * here; what is checked is what the daemon would start (the launcher, the Seatbelt profile,
 * the private directories) and what it refuses to start.
 */

const scratch = mkdtempSync(path.join(os.tmpdir(), 'wisp-sbhost-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** An executable file standing in for a launcher (never run by these tests but for bwrap's). */
function executable(name: string, body = '#!/bin/false\n'): string {
  const file = path.join(scratch, name);
  writeFileSync(file, body);
  chmodSync(file, 0o755);
  return file;
}

const profile = (net: SandboxProfile['net'] = { mode: 'none' }): SandboxProfile => ({ enabled: true, read: [], write: [], net });
const config = storedService('notes', { command: process.execPath, args: ['server.js'], cwd: null });
const launch = { command: process.execPath, args: ['server.js'], cwd: undefined, env: { PATH: '/usr/bin:/bin', HOME: '/home/ada' } };

async function refusal(host: SandboxHost, net?: SandboxProfile['net']): Promise<WispError> {
  const error: unknown = await host.wrap('notes', config, profile(net), launch, '/usr/bin:/bin').then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WispError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe('where the sandbox cannot be had, a sandboxed service does not start (SANDBOX_UNAVAILABLE)', () => {
  it('on an OS Wisp has no sandbox for, saying so, and how to run it unsandboxed knowingly', async () => {
    const host = new SandboxHost({ platform: 'win32' });
    expect(await host.availability()).toEqual({ available: false, reason: 'no sandbox is supported on win32 (Linux: bubblewrap; macOS: sandbox-exec)' });
    const error = await refusal(host);
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toContain('Nothing ran');
    expect(error.message).toContain('Wisp has no sandbox for win32');
    expect(error.message).toContain('wispctl mcp sandbox notes --off (it then gets every file and the network you have)');
    expect(error.message).not.toContain('apt-get');
  });

  it('on Linux without bwrap in the fixed directories (never the PATH), naming where it looked and the package', async () => {
    const empty = mkdtempSync(path.join(scratch, 'nobin-'));
    const error = await refusal(new SandboxHost({ platform: 'linux', toolDirs: [empty] }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.details).toEqual({ reason: `bwrap (bubblewrap) was not found in ${empty}` });
    expect(error.message).toContain('apt-get install bubblewrap');
  });

  it('on Linux with a bwrap too old for the options the sandbox needs, naming them', async () => {
    const dir = mkdtempSync(path.join(scratch, 'oldbwrap-'));
    writeFileSync(path.join(dir, 'bwrap'), `#!${process.execPath}\nconsole.log('usage: bwrap [OPTIONS...] COMMAND\\n --unshare-user\\n --ro-bind SRC DEST');\n`);
    chmodSync(path.join(dir, 'bwrap'), 0o755);
    const found = await new SandboxHost({ platform: 'linux', toolDirs: [dir] }).availability();
    expect(found.available).toBe(false);
    if (found.available) return;
    expect(found.reason).toMatch(new RegExp(`^${path.join(dir, 'bwrap')} has no .*--die-with-parent.* \\(too old: bubblewrap 0\\.5 or newer is needed\\)$`));
  });

  it('on Linux with a bwrap that cannot make a sandbox here (user namespaces off), with what bwrap said', async () => {
    const dir = mkdtempSync(path.join(scratch, 'nouserns-'));
    // Offers every option, and fails every sandbox as a kernel without user namespaces makes it.
    const options = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try', '--die-with-parent', '--new-session', '--cap-drop', '--ro-bind', '--ro-bind-try', '--bind-try', '--dev', '--proc', '--tmpfs', '--symlink', '--chdir', '--info-fd', '--disable-userns', '--ro-bind-data', '--clearenv', '--setenv', '--dir'];
    writeFileSync(
      path.join(dir, 'bwrap'),
      `#!${process.execPath}\nif (process.argv[2] === '--help') { console.log(${JSON.stringify(options.join('\n'))}); } else { console.error('bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.'); process.exit(1); }\n`,
    );
    chmodSync(path.join(dir, 'bwrap'), 0o755);
    const error = await refusal(new SandboxHost({ platform: 'linux', toolDirs: [dir] }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.details).toEqual({ reason: `${path.join(dir, 'bwrap')} cannot make a sandbox here: bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.` });
    expect(error.message).toContain('allow unprivileged user namespaces');
  });

  it('on macOS without sandbox-exec, without telling a Mac user to apt-get', async () => {
    const error = await refusal(new SandboxHost({ platform: 'darwin', sandboxExec: path.join(scratch, 'no-such-sandbox-exec') }));
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.details).toEqual({ reason: `${path.join(scratch, 'no-such-sandbox-exec')} is missing` });
    expect(error.message).toContain('sandbox-exec comes with macOS');
    expect(error.message).not.toContain('apt-get');
  });
});

describe('macOS: what the daemon would start (generated, not run: these machines are Linux)', () => {
  const sandboxExec = executable('sandbox-exec');
  const host = new SandboxHost({ platform: 'darwin', sandboxExec });

  it('the server under sandbox-exec with the deny-by-default profile, in a private home and temporary directory of its own, removed at its end', async () => {
    const wrapped = await host.wrap('notes', config, profile(), launch, '/usr/bin:/bin');
    expect(wrapped.command).toBe(sandboxExec);
    const [flag, seatbelt, ...rest] = wrapped.args;
    expect(flag).toBe('-p');
    expect(rest).toEqual([process.execPath, 'server.js']);
    expect(seatbelt?.split('\n').slice(0, 2)).toEqual(['(version 1)', '(deny default)']);
    // No network with mode none: only unix sockets inside its own temporary directory.
    expect(seatbelt).not.toContain('(allow network*)');
    const { HOME: home, TMPDIR: tmp } = wrapped.env;
    expect(home).toBeDefined();
    expect(tmp).toBeDefined();
    expect(home).not.toBe('/home/ada');
    expect(wrapped.cwd).toBe(home);
    for (const dir of [home, tmp]) {
      expect(existsSync(dir ?? '')).toBe(true);
      expect(seatbelt).toContain(`(subpath "${dir ?? ''}")`);
    }
    // The real home is no grant of it.
    expect(seatbelt).not.toContain('"/home/ada"');
    expect(wrapped.sandbox).toMatchObject({ infoFd: false, inputs: [] });
    wrapped.sandbox?.onEnd?.();
    await expect.poll(() => existsSync(home ?? '')).toBe(false);
  });

  it('with mode all, the profile allows the network', async () => {
    const wrapped = await host.wrap('notes', config, profile({ mode: 'all' }), launch, '/usr/bin:/bin');
    expect(wrapped.args[1]).toContain('(allow network*)');
    wrapped.sandbox?.onEnd?.();
  });

  it('host grants and ask are refused before anything runs (NETWORK_GRANTS_UNSUPPORTED): the egress proxy is Linux only', async () => {
    for (const net of [{ mode: 'hosts' as const, hosts: ['api.example.com'] }, { mode: 'ask' as const }]) {
      const error = await refusal(host, net);
      expect(error.code).toBe('NETWORK_GRANTS_UNSUPPORTED');
      expect(error.details).toEqual({ platform: 'macOS' });
      expect(error.message).toContain('Nothing ran');
      expect(error.message).toContain('wispctl mcp sandbox notes --net none');
    }
  });
});
