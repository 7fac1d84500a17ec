import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonEnv, perTestHomes, runWispdExpectingExit, startWispd, wispdBin } from '../helpers/wispd.js';

const home = perTestHomes(afterEach);

describe('one daemon per data dir and socket', () => {
  it('refuses a second daemon on the same data dir with "already running (pid, socket)"', async () => {
    const dataDir = home();
    const first = await startWispd(dataDir);
    const second = await runWispdExpectingExit(dataDir);
    expect(second.code).toBe(5);
    expect(second.output).toContain(`wispd is already running (pid ${first.pid}, socket ${first.socket})`);
    // The first one is untouched.
    const client = await first.connect();
    expect((await client.call('daemon.status')).pid).toBe(first.pid);
    await client.close();
  });

  it('refuses a second daemon with another data dir on the same socket', async () => {
    const run = home();
    const socket = path.join(run, 's.sock');
    const first = await startWispd(home(), { args: ['--socket', socket] });
    const second = await runWispdExpectingExit(home(), ['--socket', socket]);
    expect(second.code).toBe(5);
    expect(second.output).toContain(`already running (pid ${first.pid}, socket ${socket})`);
  });

  it('starts over a stale socket and lock left by a SIGKILLed daemon', async () => {
    const dataDir = home();
    const first = await startWispd(dataDir);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(lstatSync(first.socket).isSocket()).toBe(true);
    expect(existsSync(path.join(dataDir, 'wispd.lock'))).toBe(true);

    const second = await startWispd(dataDir);
    const client = await second.connect();
    expect((await client.call('daemon.status')).pid).toBe(second.pid);
    await client.close();
  });

  it('makes the socket 0600 inside a 0700 directory, and the data dir 0700', async () => {
    const dataDir = home();
    const daemon = await startWispd(dataDir);
    expect(statSync(daemon.socket).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(daemon.socket)).mode & 0o777).toBe(0o700);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('refuses an existing runtime dir that others can enter, and leaves its mode alone', async () => {
    const root = home();
    const runtime = path.join(root, 'rt');
    mkdirSync(runtime);
    chmodSync(runtime, 0o755);
    const result = await runWispdExpectingExit(home(), ['--runtime-dir', runtime]);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${runtime}: it is open to group or others (mode 0755); it must be private (0700)`);
    expect(result.output).toContain(`chmod 700 ${runtime}`);
    expect(statSync(runtime).mode & 0o777).toBe(0o755);
    expect(readdirSync(runtime)).toEqual([]);
  });

  it('refuses --socket in an existing directory that is open to others, and leaves its mode alone', async () => {
    const root = home();
    const shared = path.join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const result = await runWispdExpectingExit(home(), ['--socket', path.join(shared, 'w.sock')]);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${shared}: it is open to group or others (mode 0777)`);
    expect(statSync(shared).mode & 0o777).toBe(0o777);
    expect(readdirSync(shared)).toEqual([]);
  });

  it('creates a runtime dir that does not exist yet, 0700', async () => {
    const runtime = path.join(home(), 'new', 'rt');
    const daemon = await startWispd(home(), { args: ['--runtime-dir', runtime] });
    expect(daemon.socket).toBe(path.join(runtime, 'wispd.sock'));
    expect(statSync(runtime).mode & 0o777).toBe(0o700);
  });

  it('uses $XDG_RUNTIME_DIR/wisp for the socket when no data dir is forced', async () => {
    const root = home();
    const xdg = path.join(root, 'xdg');
    mkdirSync(xdg, { mode: 0o700 });
    const env = daemonEnv({ HOME: root, XDG_RUNTIME_DIR: xdg, XDG_DATA_HOME: path.join(root, 'data') });
    const child = spawn(process.execPath, [wispdBin, '--no-log-pretty', '--ready-fd', '3'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'], env });
    const line = await new Promise<string>((resolve) => (child.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => resolve(b.toString())));
    expect(JSON.parse(line)).toMatchObject({ socket: path.join(xdg, 'wisp', 'wispd.sock') });
    expect(existsSync(path.join(root, 'data', 'wisp', 'wispd.lock'))).toBe(true);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  });

  it('refuses a socket path over the platform limit instead of truncating it', async () => {
    const root = home();
    const long = path.join(root, 'd'.repeat(120), 'wispd.sock');
    const result = await runWispdExpectingExit(home(), ['--socket', long]);
    expect(result.code).toBe(2);
    expect(result.output).toMatch(/socket path is \d+ bytes, over the 10[37]-byte limit/);
    expect(existsSync(path.dirname(long))).toBe(false);
  });
});
