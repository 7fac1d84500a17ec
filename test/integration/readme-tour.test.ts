import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockDeepSeek, textEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { scenarioServer } from '../helpers/services.js';
import { Terminal } from '../helpers/tmux.js';
import { daemonEnv, killLeftovers, repoRoot, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 18: the tour (docs/wispctl.md's "A short tour"; issue 37 moved it out of README.md), run end to end against a real daemon and real stdio
 * servers (the scenario fixture standing in for /opt/mcp/files/server.js, a local npm registry
 * for the npm registry, the mock model API for DeepSeek). Each step names the README line it
 * mirrors, and the first test checks the tour still has every one of them: a README edit that
 * changes a command fails here until the mirror follows. Where the tour's paths or hosts
 * cannot exist on a test machine, the step says what it substitutes.
 *
 * Not run: `wispctl chat` (chat-terminal.test.ts runs it in a terminal), activating the
 * remote example hosts (mcp.example.com), `mcp login` (oauth.test.ts, with a real
 * authorization server) and `mcp logout`, which needs the OS keychain (keychain-cli.test.ts).
 */

const home = tempDir();
const mock = new MockDeepSeek();
let registry: LocalRegistry;
let daemon: RunningDaemon;
const docs = path.join(home.path, 'docs');
const myApp = path.join(home.path, 'my-app');
const claudeFile = path.join(home.path, 'claude_desktop_config.json');
const node = process.execPath;

/** The `wispctl` lines of the first sh block after `heading` in `file`, each without its trailing comment. */
function commandsOf(file: string, heading: string): string[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const start = text.indexOf(heading);
  expect(start, `${file} has ${heading}`).toBeGreaterThanOrEqual(0);
  const block = text.slice(text.indexOf('```sh\n', start) + 6, text.indexOf('\n```', text.indexOf('```sh\n', start) + 6));
  return block.split('\n').map((line) => line.replace(/\s+#.*$/, '').trimEnd()).filter((line) => line.startsWith('wispctl '));
}

const tour = commandsOf('docs/wispctl.md', '## A short tour');

/**
 * The README's five-minute start: each line is one the tour runs above, or one that the
 * named test runs with a real server (server-everything from the npm registry, sandboxed).
 */
const START_ELSEWHERE: Record<string, { readonly test: string; readonly runs: string }> = {
  'wispctl mcp tools mcp-server-everything': { test: 'test/integration/sandbox-real-servers.test.ts', runs: "ctl(['mcp', 'tools', 'everything'])" },
  'wispctl mcp call mcp-server-everything echo message=hello': { test: 'test/integration/sandbox-real-servers.test.ts', runs: "call('everything', 'echo', { message: " },
  'wispctl mcp connect-client claude-desktop': { test: 'test/integration/connect-client.test.ts', runs: "'claude-desktop'" },
};

/** The README lines the steps below mirror, in the tour's order. */
const MIRRORED: string[] = [];

function step(readmeLine: string): string {
  MIRRORED.push(readmeLine);
  return readmeLine;
}

const ctl = (args: string[], input?: string) => runWispctl(['--socket', daemon.socket, ...args], input !== undefined ? { input } : {});

beforeAll(async () => {
  const npm12 = await ensureNpm12();
  registry = await LocalRegistry.start();
  const hello = readFileSync(path.join(repoRoot, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
  await registry.publish({ name: 'greeting-lib', version: '1.0.0', files: { 'index.js': 'exports.greet = (name) => `hello ${name}`;\n' } });
  await registry.publish({
    name: '@modelcontextprotocol/server-everything',
    version: '2026.8.31',
    dependencies: { 'greeting-lib': '^1.0.0' },
    bin: { 'mcp-server-everything': 'bin/hello.js' },
    files: { 'bin/hello.js': hello },
  });
  mkdirSync(docs);
  mkdirSync(myApp);
  writeFileSync(path.join(myApp, '.mcp.json'), JSON.stringify({ mcpServers: { 'app-tools': { command: node, args: [scenarioServer] } } }));
  writeFileSync(claudeFile, JSON.stringify({ mcpServers: { 'from-claude': { command: node, args: [scenarioServer] } } }));
  const url = await mock.start();
  daemon = await startWispd(path.join(home.path, 'data'), { env: daemonEnv() });
  const client = await daemon.connect();
  await client.call('installs.setSettings', { runtimeDirs: [npm12], registry: registry.url, timeoutMs: 120_000 });
  // The tour's `model set --base-url https://api.deepseek.com`: this run's model API is the mock.
  await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
  await client.close();
}, NPM12_SETUP_MS);
afterAll(async () => {
  await mock.stop();
  await registry.close();
  killLeftovers();
  home.remove();
});

describe('the README tour, end to end', () => {
  it('status, add, list, show', async () => {
    step('wispctl status');
    const status = await ctl(['status']);
    expect(status.stdout).toMatch(/^wispd \S+ running \(pid \d+, up \d+s\)\nsocket: +\S+\ndata dir: +\S+\nservices: +0 \(0 enabled\)/);

    step('wispctl mcp add files --cwd /home/me/docs -- /usr/bin/node /opt/mcp/files/server.js --root /home/me/docs');
    const files = await ctl(['mcp', 'add', 'files', '--cwd', docs, '--', node, scenarioServer, '--root', docs]);
    expect(files.code).toBe(0);
    expect(files.stdout).toMatch(/^registered files \(disabled, id [0-9a-f-]{36}\)\n/);
    step('wispctl mcp add weather --args-json \'["/opt/mcp/weather.js", "--units", "metric"]\' -- /usr/bin/node');
    const weather = await ctl(['mcp', 'add', 'weather', '--args-json', JSON.stringify([scenarioServer, '--units', 'metric']), '--', node]);
    expect(weather.stdout).toContain(`args:     ${scenarioServer} --units metric`);

    step('wispctl mcp list');
    const list = await ctl(['mcp', 'list']);
    expect(list.stdout).toMatch(/^NAME +STATE +PID +TOOLS +SINCE +TRANSPORT +SANDBOX +REASON\nfiles +disabled +- +- +\S+ +stdio +on, net none\nweather +disabled +- +- +\S+ +stdio +on, net none\n\n0 of 2 connected; idle \(no service started\)\n$/);
    step('wispctl mcp show files');
    const show = await ctl(['mcp', 'show', 'files']);
    expect(show.stdout).toMatch(/^name: +files\nid: +\S+\nstate: +disabled\n/m);
    expect(JSON.parse((await ctl(['mcp', 'show', 'files', '--json'])).stdout)).toMatchObject({ name: 'files', cwd: docs });

    step('wispctl mcp sandbox files');
    const sees = await ctl(['mcp', 'sandbox', 'files']);
    expect(sees.stdout).toContain('it will see only these paths');
    expect(sees.stdout).toContain(`read-write ${docs}  (its cwd)`);
    step('wispctl mcp sandbox files --allow-read /home/me/papers');
    const papers = path.join(home.path, 'papers');
    mkdirSync(papers);
    const granted = await ctl(['mcp', 'sandbox', 'files', '--allow-read', papers]);
    expect(granted.stdout).toMatch(/^updated files \(disabled, configVersion 2\)/);
    expect(granted.stdout).toContain(`read:    ${papers}`);
  });

  it.skipIf(!Terminal.available())('activate (asked in a terminal), tools, refresh, logs', async () => {
    step('wispctl mcp activate files');
    const terminal = new Terminal(['/bin/sh', '-c', '"$@"; echo "[exit $?]"', 'sh', node, wispctlBin, '--socket', daemon.socket, 'mcp', 'activate', 'files'], { PATH: process.env.PATH ?? '' }, { width: 250, height: 50 });
    try {
      const asked = await terminal.waitFor(/Trust and start \S+ \(service files\)\? \[y\/N\]\s*$/m);
      expect(asked).toContain(`  command:      ${node}`);
      expect(asked).toContain(`  cwd:          ${docs}`);
      terminal.type('y');
      terminal.press('Enter');
      expect(await terminal.waitFor(/\[exit \d+\]/)).toMatch(/^files: active \(pid \d+, 2 tools\)\n\[exit 0\]/m);
    } finally {
      terminal.close();
    }
    step('wispctl mcp tools files');
    expect((await ctl(['mcp', 'tools', 'files'])).stdout).toMatch(/^files +echo +mcp_[0-9a-f]{12}_[0-9a-f]{16} +readOnly +Echoes its text argument\.$/m);
    step('wispctl mcp refresh files');
    expect((await ctl(['mcp', 'refresh', 'files'])).stdout).toMatch(/^files: active/);
    step('wispctl mcp logs files');
    expect((await ctl(['mcp', 'logs', 'files'])).code).toBe(0);
  });

  it('a tool call answered from another terminal with approvals and approve ID-prefix', async () => {
    // read_file of server-filesystem -> echo of the fixture server.
    step('wispctl mcp call files read_file \'{"path": "/home/me/docs/todo.txt"}\'');
    const call = ctl(['mcp', 'call', 'files', 'echo', '{"text": "/home/me/docs/todo.txt"}']);
    let approvals = await ctl(['approvals']);
    while (!approvals.stdout.includes('a tool call')) approvals = await ctl(['approvals']);
    step('wispctl approvals');
    expect(approvals.stdout).toMatch(/^approval ([0-9a-f-]{36}) \(pending\): a tool call\n {2}service: +files\n {2}tool: +echo\n {2}arguments: +\{"text":"\/home\/me\/docs\/todo\.txt"\}/);
    const id = /^approval ([0-9a-f-]{36})/.exec(approvals.stdout)?.[1] ?? '';
    step('wispctl approve 4f0c...');
    expect(await ctl(['approve', id.slice(0, 4)])).toMatchObject({ code: 0, stdout: `${id}: approved\n` });
    const done = await call;
    expect(done).toMatchObject({ code: 0, stdout: '/home/me/docs/todo.txt\n' });
    expect(done.stderr).toContain(`waiting for a human: wispctl approve ${id} (or deny)`);
  });

  it('env, model, send, sessions', async () => {
    // The keychain is not there on a test machine: --session, as the tour's comment offers.
    step('wispctl mcp env set files FILES_TOKEN');
    expect((await ctl(['mcp', 'env', 'set', 'files', 'FILES_TOKEN', '--session'], 'token-value\n')).code).toBe(0);
    step('wispctl mcp env list files');
    expect((await ctl(['mcp', 'env', 'list', 'files'])).stdout).toMatch(/^VARIABLE +STORAGE +SECRET\nFILES_TOKEN +session +yes\n$/);
    step('wispctl model set-key');
    expect((await ctl(['model', 'set-key', '--session'], 'sk-tour\n')).stdout).toBe('API key saved (session)\n');
    step('wispctl model set --model deepseek-chat --base-url https://api.deepseek.com');
    expect((await ctl(['model', 'set', '--model', 'deepseek-chat'])).stdout).toMatch(/^model settings saved: deepseek-chat at http:\/\/127\.0\.0\.1:\d+/);
    mock.enqueue({ events: textEvents('Your docs folder has todo.txt.') });
    step('wispctl send "What files are in my docs folder?"');
    const send = await ctl(['send', 'What files are in my docs folder?']);
    expect(send).toMatchObject({ code: 0, stdout: 'Your docs folder has todo.txt.\n' });
    step('wispctl sessions');
    expect((await ctl(['sessions'])).stdout).toMatch(/^ID +TITLE +MESSAGES +LAST TASK +UPDATED\n[0-9a-f-]{36} +What files are in my docs folder\? +2 +completed \(stop\) /);
  });

  it('install from the npm registry, activate it, install list', async () => {
    step('wispctl install @modelcontextprotocol/server-everything@2026.8.31 --bin mcp-server-everything');
    const installed = await ctl(['install', '@modelcontextprotocol/server-everything@2026.8.31', '--bin', 'mcp-server-everything', '--yes']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(/^installed @modelcontextprotocol\/server-everything@2026\.8\.31 \(\d+ packages verified\)\nregistered mcp-server-everything \(disabled\)/);
    step('wispctl mcp activate mcp-server-everything');
    expect((await ctl(['mcp', 'activate', 'mcp-server-everything', '--yes'])).stdout).toMatch(/^mcp-server-everything: active \(pid \d+, 1 tool\)/);
    step('wispctl install list');
    expect((await ctl(['install', 'list'])).stdout).toMatch(/^DIGEST +PACKAGE +STATUS +SERVICE +STARTED\n[0-9a-f]{32} +@modelcontextprotocol\/server-everything@2026\.8\.31 +succeeded +mcp-server-everything /);
  }, 180_000);

  it('config sources, reload, import', async () => {
    step('wispctl mcp sources add-project ~/code/my-app');
    expect((await ctl(['mcp', 'sources', 'add-project', myApp])).stdout).toContain(`projects:   ${myApp}`);
    step('wispctl mcp sources');
    expect((await ctl(['mcp', 'sources'])).stdout).toMatch(/^app-tools +stdio +added +project /m);
    step('wispctl mcp reload');
    expect((await ctl(['mcp', 'reload'])).stdout).toMatch(/^app-tools +stdio +unchanged +project /m);
    step('wispctl mcp import ~/Library/Application\\ Support/Claude/claude_desktop_config.json');
    expect((await ctl(['mcp', 'import', claudeFile])).stdout).toBe('imported from-claude (stdio, disabled, sandboxed)\nthe local ones run sandboxed: no network, their cwd only, nothing else of yours (not your home, not other projects); a path their args name is not granted by itself. See and grant with: wispctl mcp sandbox NAME\ntrust and start each with: wispctl mcp activate NAME\n');
  });

  it('remote servers: add-remote, header set (activation needs the real hosts)', async () => {
    step('wispctl mcp add-remote docs-search https://mcp.example.com/mcp');
    expect((await ctl(['mcp', 'add-remote', 'docs-search', 'https://mcp.example.com/mcp'])).stdout).toMatch(/^registered docs-search \(disabled/);
    step('wispctl mcp header set docs-search Authorization');
    expect((await ctl(['mcp', 'header', 'set', 'docs-search', 'Authorization', '--session'], 'Bearer tour\n')).code).toBe(0);
    expect((await ctl(['mcp', 'header', 'list', 'docs-search'])).stdout).toMatch(/^HEADER +STORAGE\nAuthorization +session\n$/);
    step('wispctl mcp add-remote tracker https://mcp.tracker.example/mcp --oauth');
    expect((await ctl(['mcp', 'add-remote', 'tracker', 'https://mcp.tracker.example/mcp', '--oauth'])).stdout).toMatch(/^registered tracker \(disabled/);
  });

  it('edit, remove, events, call, daemon stop', async () => {
    step('wispctl mcp disable files');
    expect((await ctl(['mcp', 'disable', 'files'])).stdout).toMatch(/^files: disabled/);
    step('wispctl mcp edit files --name docs --no-cwd');
    expect((await ctl(['mcp', 'edit', 'files', '--name', 'docs', '--no-cwd'])).code).toBe(0);
    step('wispctl mcp edit docs -- /usr/bin/node /opt/mcp/files/v2.js');
    expect((await ctl(['mcp', 'edit', 'docs', '--', node, scenarioServer])).code).toBe(0);
    step('wispctl mcp remove weather');
    expect((await ctl(['mcp', 'remove', 'weather'])).code).toBe(0);
    expect((await ctl(['mcp', 'list'])).stdout).not.toMatch(/^(files|weather) /m);

    step('wispctl events');
    expect((await ctl(['events'])).stdout).toMatch(/^ +\d+ +\S+ +service\.deleted +weather$/m);
    step('wispctl events --follow --json');
    const follow = spawn(node, [wispctlBin, '--socket', daemon.socket, 'events', '--follow', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const first = await new Promise<string>((resolve) => {
      let out = '';
      follow.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
      });
    });
    expect(JSON.parse(first)).toMatchObject({ seq: 1, type: expect.any(String) as string });
    const ended = new Promise<number | null>((resolve) => follow.once('close', (code) => resolve(code)));
    follow.kill('SIGINT');
    expect(await ended).toBe(130);

    step('wispctl call rpc.discover');
    expect(JSON.parse((await ctl(['call', 'rpc.discover'])).stdout)).toMatchObject({ openrpc: expect.any(String) as string });
    step('wispctl daemon stop');
    expect((await ctl(['daemon', 'stop'])).stdout).toBe(`wispd stopped (pid ${daemon.pid})\n`);
    await daemon.exited;
  });

  it('the tour still has every line mirrored above', () => {
    expect(MIRRORED.length).toBeGreaterThan(30);
    for (const line of MIRRORED) expect(tour, line).toContain(line);
  });

  it('the README\'s five-minute start runs only what is run above or by a test with a real server', () => {
    const start = commandsOf('README.md', '## Five-minute start');
    expect(start.length).toBeGreaterThanOrEqual(5);
    for (const line of start) {
      if (MIRRORED.includes(line)) continue;
      const elsewhere = START_ELSEWHERE[line];
      if (elsewhere === undefined) throw new Error(`${line}: neither in the tour nor run by another test`);
      expect(readFileSync(path.join(repoRoot, elsewhere.test), 'utf8'), line).toContain(elsewhere.runs);
    }
  });
});
