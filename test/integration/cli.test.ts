import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { scenarioServer } from '../helpers/services.js';
import { daemonEnv, environOf, isRunning, onLinux, runWispctl, tempDir, wispctlBin } from '../helpers/wispd.js';

const home = tempDir();
const env = daemonEnv({ WISP_HOME: home.path });
const ctl = (...args: string[]) => runWispctl(args, { env });

afterAll(async () => {
  await ctl('daemon', 'stop');
  home.remove();
});

describe('wispctl against a daemon it starts', () => {
  it('says clearly when no daemon runs', async () => {
    const result = await ctl('status');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('no daemon answers on');
    expect(result.stderr).toContain('wispctl daemon start');
  });

  it('starts the daemon in the background and waits for its socket', async () => {
    const started = await ctl('daemon', 'start');
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^wispd started \(pid \d+, socket .*wispd\.sock, log .*wispd\.log\)/);
    // Started with glibc's malloc told to keep less (src/cli/daemon-env.ts), on top of the caller's environment.
    const pid = Number(/pid (\d+)/.exec(started.stdout)?.[1]);
    if (onLinux) expect(environOf(pid).split('\0')).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=2', 'MALLOC_TRIM_THRESHOLD_=131072', 'MALLOC_MMAP_THRESHOLD_=131072', `WISP_HOME=${home.path}`]));
    const again = await ctl('daemon', 'start');
    expect(again.stdout).toMatch(/^wispd is already running \(pid \d+/);
    const status = await ctl('status');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`data dir:  ${home.path}`);
  });

  it('registers, lists, shows, edits and removes a service', async () => {
    const add = await ctl('mcp', 'add', 'files', '--cwd', '/tmp', '--', '/usr/bin/node', '/srv/files.js', '--root', 'a dir');
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('registered files (disabled');
    expect(add.stdout).toContain('args:     /srv/files.js --root "a dir"');

    const list = await ctl('--json', 'mcp', 'list');
    const services = JSON.parse(list.stdout) as { name: string; args: string[]; enabled: boolean; cwd: string }[];
    expect(services).toEqual([expect.objectContaining({ name: 'files', args: ['/srv/files.js', '--root', 'a dir'], enabled: false, cwd: '/tmp' })]);
    expect((await ctl('mcp', 'list')).stdout).toMatch(/^NAME\s+STATE\s+PID\s+TOOLS\s+SINCE\s+TRANSPORT\s+SANDBOX\s+REASON\nfiles\s+disabled\s+-\s+-\s+\S+\s+stdio\s+on, net none$/m);

    const edit = await ctl('mcp', 'edit', 'files', '--name', 'docs', '--no-cwd', '--args-json', '["/srv/docs.js"]');
    expect(edit.code).toBe(0);
    const shown = JSON.parse((await ctl('--json', 'mcp', 'show', 'docs')).stdout) as { args: string[]; cwd: null; configVersion: number };
    expect(shown).toMatchObject({ args: ['/srv/docs.js'], cwd: null, configVersion: 2 });

    const events = await ctl('events');
    expect(events.stdout).toMatch(/service\.registered\s+files \(v1\)\n.*service\.updated\s+docs \(v2\)/);

    const removed = await ctl('mcp', 'remove', 'docs');
    expect(removed.stdout).toMatch(/^removed docs/);
    expect((await ctl('mcp', 'list')).stdout).toContain('no services registered');
  });

  it('maps error codes to documented exit statuses', async () => {
    await ctl('mcp', 'add', 'dup', '--', '/bin/true');
    const duplicate = await ctl('mcp', 'add', 'dup', '--', '/bin/true');
    expect(duplicate.code).toBe(5);
    expect(duplicate.stderr).toContain('(SERVICE_NAME_TAKEN)');
    const missing = await ctl('mcp', 'show', 'nope');
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('(SERVICE_NOT_FOUND)');
    // (A relative --cwd is resolved against the current directory: cli-edges.test.ts.)
    const unsafe = await ctl('mcp', 'add', 'rel', '--cwd', '', '--', '/bin/true');
    expect(unsafe.code).toBe(2);
    expect(unsafe.stderr).toContain('(INVALID_PARAMS)');
    const badName = await ctl('mcp', 'add', 'bad name', '--', '/bin/true');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('(INVALID_PARAMS)');
    const usage = await ctl('mcp', 'frobnicate');
    expect(usage.code).toBe(2);
    await ctl('mcp', 'remove', 'dup');
  });

  it('follows events live with --follow --json', async () => {
    const follower = spawn(process.execPath, [wispctlBin, '--json', 'events', '--follow'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const firstLine = new Promise<string>((resolve) => {
      let text = '';
      follower.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const lines = text.split('\n').filter((l) => l.includes('"live-one"'));
        if (lines[0] !== undefined) resolve(lines[0]);
      });
    });
    // Even if this lands before the follower subscribes, it replays held events from seq 0.
    await ctl('mcp', 'add', 'live-one', '--', '/bin/true');
    const line = await firstLine;
    expect(JSON.parse(line)).toMatchObject({ type: 'service.registered', service: { name: 'live-one' } });
    // Interrupted, it ends like every interrupted wispctl command (issue 13): exit 130.
    follower.kill('SIGINT');
    expect(await new Promise((resolve) => follower.once('exit', resolve))).toBe(130);
    await ctl('mcp', 'remove', 'live-one');
  });

  it('stops the daemon and waits for it to exit', async () => {
    const status = JSON.parse((await ctl('--json', 'status')).stdout) as { pid: number; paths: { socket: string } };
    const stopped = await ctl('daemon', 'stop');
    expect(stopped.stdout).toBe(`wispd stopped (pid ${status.pid})\n`);
    expect(isRunning(status.pid)).toBe(false);
    expect(existsSync(status.paths.socket)).toBe(false);
    expect((await ctl('daemon', 'stop')).stdout).toBe('wispd is not running\n');
    const daemonStatus = await ctl('daemon', 'status');
    expect(daemonStatus.code).toBe(3);
    expect(daemonStatus.stdout).toContain('not running');
  });
});

describe('wispctl daemon install', () => {
  it('prints the unit it would write, with absolute paths, and writes nothing on --dry-run', async () => {
    const root = tempDir();
    try {
      const configHome = path.join(root.path, 'config');
      mkdirSync(configHome);
      const result = await runWispctl(['daemon', 'install', '--dry-run'], { env: { ...env, HOME: root.path, XDG_CONFIG_HOME: configHome } });
      expect(result.code).toBe(0);
      if (process.platform === 'darwin') {
        expect(result.stdout).toContain(path.join(root.path, 'Library', 'LaunchAgents', 'dev.wisp.wispd.plist'));
        expect(result.stdout).toContain('launchctl bootstrap gui/');
      } else {
        const unit = path.join(configHome, 'systemd', 'user', 'wispd.service');
        expect(result.stdout).toContain(`would write ${unit}:`);
        // WISP_HOME was set, so the unit pins the same data dir.
        expect(result.stdout).toContain(`ExecStart=${process.execPath} ${path.resolve('bin/wispd.js')} --no-log-pretty --data-dir ${home.path}\n`);
        expect(result.stdout).toContain('systemctl --user enable --now wispd.service');
        expect(result.stdout).toContain('\nEnvironment=MALLOC_ARENA_MAX=2\nEnvironment=MALLOC_TRIM_THRESHOLD_=131072\nEnvironment=MALLOC_MMAP_THRESHOLD_=131072\n');
        // Issue 33, LOW 9: no core file of the daemon (it would hold the secrets it read).
        expect(result.stdout).toContain('\nLimitCORE=0\n');
        expect(existsSync(unit)).toBe(false);
      }
      const uninstall = await runWispctl(['daemon', 'uninstall', '--dry-run'], { env: { ...env, HOME: root.path, XDG_CONFIG_HOME: configHome } });
      expect(uninstall.stdout).toMatch(/would run:\n\s+(systemctl --user disable --now wispd\.service|launchctl bootout)/);
    } finally {
      root.remove();
    }
  });
});

describe('wispctl --help', () => {
  it('documents every command and every error code', async () => {
    const help = await runWispctl(['--help']);
    for (const command of ['status', 'events', 'mcp', 'call', 'daemon']) expect(help.stdout).toContain(command);
    // Issue 18: the codes are in wispctl errors (help errors), not in every --help.
    expect(help.stdout).toContain('wispctl help errors');
    const errors = await runWispctl(['errors']);
    for (const code of ERROR_CODES) expect(errors.stdout).toContain(code);
    const mcp = await runWispctl(['mcp', '--help']);
    for (const command of ['add', 'list', 'show', 'edit', 'remove']) expect(mcp.stdout).toContain(command);
    const daemon = await runWispctl(['daemon', '--help']);
    for (const command of ['start', 'stop', 'status', 'install', 'uninstall']) expect(daemon.stdout).toContain(command);
  });
});

describe('wispctl runs a real server', () => {
  const runHome = tempDir();
  const runEnv = daemonEnv({ WISP_HOME: runHome.path });
  const run = (...args: string[]) => runWispctl(args, { env: runEnv });
  afterAll(async () => {
    await run('daemon', 'stop');
    runHome.remove();
  });

  it('activates, lists tools, refreshes, shows logs and disables, as a user would', async () => {
    expect((await run('daemon', 'start')).code).toBe(0);
    await run('mcp', 'add', 'demo', '--', process.execPath, scenarioServer, '--tools', '1', '--grandchild');

    const refused = await run('mcp', 'activate', 'demo');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`command:      ${process.execPath}`);
    expect(refused.stderr).toContain('pass --yes');
    expect((await run('--json', 'mcp', 'show', 'demo')).stdout).toContain('"status": "disabled"');

    const activated = await run('mcp', 'activate', 'demo', '--yes');
    expect(activated.code).toBe(0);
    expect(activated.stdout).toMatch(/^demo: active \(pid \d+, 3 tools\)$/m);

    const list = await run('mcp', 'list');
    expect(list.stdout).toMatch(/^demo\s+active\s+\d+\s+3\s+\S+\s+stdio\s+on, net none\s*$/m);
    const tools = await run('mcp', 'tools', 'demo');
    expect(tools.stdout).toMatch(/^demo\s+echo\s+mcp_[0-9a-f]{12}_[0-9a-f]{16}\s+readOnly\s+Echoes its text argument\.$/m);
    expect((await run('mcp', 'refresh', 'demo')).stdout).toMatch(/^demo: active/m);
    expect((await run('mcp', 'logs', 'demo')).stdout).toMatch(/grandchild pid \d+/);

    const disabled = await run('mcp', 'disable', 'demo');
    expect(disabled.stdout).toBe('demo: disabled\n');
    expect((await run('mcp', 'tools')).stdout).toBe('no active tools\n');
  });

  it('calls a tool that another terminal approves, and reports a denial', async () => {
    await run('mcp', 'activate', 'demo', '--yes');
    const callOnce = () => {
      const child = spawn(process.execPath, [wispctlBin, 'mcp', 'call', 'demo', 'echo', '{"text":"hello from the cli"}'], { env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      const waiting = new Promise<string>((resolve) =>
        child.stderr.on('data', (b: Buffer) => {
          stderr += b.toString();
          const id = /waiting for a human: wispctl approve (\S+)/.exec(stderr)?.[1];
          if (id !== undefined) resolve(id);
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      return { waiting, exited, out: () => stdout, err: () => stderr };
    };

    const first = callOnce();
    const id = await first.waiting;
    expect(first.err()).toContain('arguments:  {"text":"hello from the cli"}');
    expect(first.err()).toMatch(/from the server, not verified:\n( {4}title: +.*\n)? {4}hints: +readOnlyHint\n/);
    expect((await run('approvals')).stdout).toContain(`approval ${id} (pending)`);
    expect((await run('approve', id)).stdout).toBe(`${id}: approved\n`);
    expect(await first.exited).toBe(0);
    expect(first.out()).toBe('hello from the cli\n');

    const second = callOnce();
    const denied = await second.waiting;
    expect((await run('deny', denied)).stdout).toBe(`${denied}: denied\n`);
    expect(await second.exited).toBe(7);
    expect(second.err()).toContain('(APPROVAL_DENIED)');
    expect((await run('approve', denied)).code).toBe(5);
  });

  it('sets variables from stdin, never from argv, and lists names only', async () => {
    const set = await runWispctl(['mcp', 'env', 'set', 'demo', 'DEMO_TOKEN', '--session'], { env: runEnv, input: 'piped-secret-4242\n' });
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('DEMO_TOKEN saved (session only)');
    const list = await run('mcp', 'env', 'list', 'demo');
    expect(list.stdout).toMatch(/^VARIABLE\s+STORAGE\s+SECRET\nDEMO_TOKEN\s+session\s+yes$/m);
    expect(`${list.stdout}${(await run('--json', 'mcp', 'show', 'demo')).stdout}`).not.toContain('piped-secret-4242');
    const activated = await run('mcp', 'activate', 'demo', '--yes');
    expect(activated.stderr).toBe('');
    expect(activated.stdout).toMatch(/^demo: active/m);
    expect((await run('mcp', 'env', 'clear', 'demo')).stdout).toBe('demo: variables cleared\n');
    expect((await run('mcp', 'env', 'list', 'demo')).stdout).toBe('no variables\n');
  });

  it('exits with the failure code when activation fails', async () => {
    await run('mcp', 'add', 'broken', '--', 'no-such-wisp-command');
    const result = await run('mcp', 'activate', 'broken', '--yes');
    expect(result.stdout).toContain("broken: failed COMMAND_NOT_FOUND: no-such-wisp-command was not found on the daemon's PATH");
    expect(result.code).toBe(1);
    expect((await run('mcp', 'list')).stdout).toMatch(/^broken\s+failed\s+-\s+-\s+\S+\s+stdio\s+on, net none\s+COMMAND_NOT_FOUND: /m);
  });
});

describe('wispctl daemon start and its log', () => {
  it('rotates a wispd.log over 10 MB to wispd.log.1 when it starts the daemon', async () => {
    const own = tempDir();
    const ownEnv = daemonEnv({ WISP_HOME: own.path });
    try {
      const log = path.join(own.path, 'wispd.log');
      writeFileSync(log, 'old line\n'.repeat(1_200_000));
      const started = await runWispctl(['daemon', 'start'], { env: ownEnv });
      expect(started.code).toBe(0);
      expect(statSync(`${log}.1`).size).toBe(9 * 1_200_000);
      expect(readFileSync(log, 'utf8')).not.toContain('old line');
      expect(readFileSync(log, 'utf8')).toContain('wispd ready');
    } finally {
      await runWispctl(['daemon', 'stop'], { env: ownEnv });
      own.remove();
    }
  });
});
