import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { scenarioServer } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

// Issue 34: the sandbox on the command line. mcp add's flags, mcp sandbox, what show, list
// and the trust prompt say (every path it will see, the paths its args name that it will not).

const home = tempDir('wisp-cls-');
const docs = path.join(home.path, 'docs');
const out = path.join(home.path, 'out');
const proj = path.join(home.path, 'proj');
let daemon: RunningDaemon;
let client: WispClient;

const ctl = (args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  for (const dir of [docs, out, proj]) mkdirSync(dir);
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('mcp add and the sandbox', () => {
  it('registers a stdio server sandboxed by default: no network, no grants', async () => {
    const added = await ctl(['mcp', 'add', 'plain', '--', process.execPath, scenarioServer]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('sandbox:  on: it sees what it needs to run (read-only), its cwd (read-write), a private empty $HOME and /tmp, and these grants:');
    expect(added.stdout).toContain('network: none (its own loopback only)');
    expect((await client.call('services.get', { name: 'plain' })).service.sandbox).toEqual({ status: 'on', read: [], write: [], net: { mode: 'none' } });
  });

  it('takes --allow-read, --allow-write and --allow-net, repeated', async () => {
    const added = await ctl(['mcp', 'add', '--cwd', proj, '--allow-read', docs, '--allow-write', out, '--allow-net', 'API.example.com:443', '--allow-net', '10.0.0.5', 'granted', '--', process.execPath, scenarioServer, docs]);
    expect(added.code).toBe(0);
    expect((await client.call('services.get', { name: 'granted' })).service.sandbox).toEqual({ status: 'on', read: [docs], write: [out], net: { mode: 'hosts', hosts: ['api.example.com:443', '10.0.0.5'] } });
    expect(added.stdout).toContain("network: only api.example.com:443, 10.0.0.5; through Wisp's egress proxy, which checks every connection before any name is resolved");
  });

  it('refuses a grant that does not exist, and nothing is registered', async () => {
    const missing = path.join(home.path, 'nope');
    const refused = await ctl(['mcp', 'add', '--allow-read', missing, 'typo', '--', process.execPath, scenarioServer]);
    expect(refused).toMatchObject({ code: 2, stdout: '', stderr: `wispctl: --allow-read ${missing}: ${missing} does not exist (create it first, or give a path that exists) (INVALID_PARAMS)\n` });
    await expect(client.call('services.get', { name: 'typo' })).rejects.toMatchObject({ code: 'SERVICE_NOT_FOUND' });
    // The daemon checks them too: a client that sends a path that is not there.
    await expect(client.call('services.register', { name: 'typo', command: process.execPath, sandbox: { enabled: true, read: [missing], write: [], net: { mode: 'none' } } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(client.call('services.register', { name: 'typo', command: process.execPath, sandbox: { enabled: true, read: ['docs'], write: [], net: { mode: 'none' } } })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });

  it('--no-sandbox says plainly what it gives away, and refuses grants beside it', async () => {
    const added = await ctl(['mcp', 'add', '--no-sandbox', 'open', '--', process.execPath, scenarioServer]);
    expect(added.code).toBe(0);
    expect(added.stderr).toContain("warning: open has no sandbox (--no-sandbox): it runs as you, unsandboxed: it can read and write every file you can (~/.ssh, ~/.aws, your browser's profile, Wisp's own data), reach any host, and signal your processes");
    expect((await client.call('services.get', { name: 'open' })).service.sandbox).toEqual({ status: 'off' });
    const both = await ctl(['mcp', 'add', '--no-sandbox', '--allow-read', docs, 'both', '--', process.execPath, scenarioServer]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--no-sandbox gives the server every file and host you have');
    const help = await ctl(['mcp', 'add', '--help']);
    expect(help.stdout).toContain('--no-sandbox');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--no-sandbox run it without a sandbox: it runs as you, unsandboxed: it can read and write every file you can');
  });

  it('mcp list has a SANDBOX column', async () => {
    const list = await ctl(['mcp', 'list']);
    expect(list.stdout.split('\n')[0]).toMatch(/TRANSPORT +SANDBOX +REASON/);
    expect(list.stdout).toMatch(/\nplain .* stdio +on, net none/);
    expect(list.stdout).toMatch(/\nopen .* stdio +OFF/);
  });
});

describe('the trust prompt and mcp show list every path it will see', () => {
  it('names what it sees, read-write and read-only and empty, and offers the paths its args name that it will not see', async () => {
    // Not a terminal: the prompt is shown, then nobody can confirm (and nothing runs).
    const shown = await ctl(['mcp', 'activate', 'granted']);
    expect(shown.code).toBe(2);
    const text = shown.stderr;
    expect(text).toContain('granted will run in a sandbox: it sees only the paths listed below, and the network shown.');
    expect(text).toContain(`read-write ${proj}  (its cwd)`);
    expect(text).toContain(`read-write ${out}  (granted)`);
    expect(text).toContain(`read-only  ${docs}  (granted)`);
    expect(text).toMatch(/empty {6}\S+ {2}\(its private \$HOME\)/);
    expect(text).toMatch(/read-only {2}\/usr, .*\(the system\)/);
    expect(text).toContain("network:      only the hosts granted (through Wisp's egress proxy");
    expect(text).toContain('processes:    at most 512 tasks at once');
    expect((await client.call('services.get', { name: 'granted' })).service.connection.status).toBe('disabled');
    // A path in the args, not granted: offered, not given.
    const secret = path.join(home.path, 'secret');
    writeFileSync(secret, 'x');
    await ctl(['mcp', 'edit', 'plain', '--', process.execPath, scenarioServer, secret]);
    const offered = await ctl(['mcp', 'show', 'plain']);
    expect(offered.stdout).toContain(`not granted:  args[1] names ${secret}; it will not see it unless you grant it: wispctl mcp sandbox plain --allow-read ${secret} (or --allow-write)`);
  });

  it('says a legacy or unsandboxed service is not sandboxed, and how to turn it on', async () => {
    const open = await ctl(['mcp', 'activate', 'open']);
    expect(open.stderr).toContain('open will run with its sandbox OFF (--no-sandbox): it runs as you, unsandboxed');
    const show = await ctl(['mcp', 'show', 'open']);
    expect(show.stdout).toContain('turn it on with: wispctl mcp sandbox open --on');
  });
});

describe('mcp sandbox', () => {
  it('turns it on, grants and takes back, each an edit that disables the service', async () => {
    const before = (await client.call('services.get', { name: 'open' })).service.configVersion;
    const on = await ctl(['mcp', 'sandbox', 'open', '--on', '--allow-read', docs]);
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('updated open (disabled, configVersion');
    const after = (await client.call('services.get', { name: 'open' })).service;
    expect(after).toMatchObject({ sandbox: { status: 'on', read: [docs], write: [], net: { mode: 'none' } }, configVersion: before + 1 });
    expect((await ctl(['mcp', 'sandbox', 'open', '--revoke', docs, '--net', 'ask', '--allow-net', 'a.example'])).code).toBe(0);
    expect((await client.call('services.get', { name: 'open' })).service.sandbox).toEqual({ status: 'on', read: [], write: [], net: { mode: 'ask', hosts: ['a.example'] } });
    const off = await ctl(['mcp', 'sandbox', 'open', '--off']);
    expect(off.stderr).toContain('warning: open: it runs as you, unsandboxed');
    expect((await client.call('services.get', { name: 'open' })).service.sandbox).toEqual({ status: 'off' });
    const refused = await ctl(['mcp', 'sandbox', 'open', '--allow-read', docs]);
    expect(refused).toMatchObject({ code: 2, stderr: 'wispctl: open is not sandboxed (off): turn it on with --on (grants may come with it) (INVALID_PARAMS)\n' });
  });

  it('without flags shows what it sees, and changes nothing', async () => {
    const version = (await client.call('services.get', { name: 'granted' })).service.configVersion;
    const shown = await ctl(['mcp', 'sandbox', 'granted']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('it will see only these paths');
    expect((await client.call('services.get', { name: 'granted' })).service.configVersion).toBe(version);
  });
});
