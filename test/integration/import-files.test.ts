import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { WispEvent } from '../../src/core/index.js';
import { EventLog, scenarioServer } from '../helpers/services.js';
import { daemonEnv, killLeftovers, runWispctl, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 33, "also found": `mcp import FILE` refused VS Code's own mcp.json (JSONC, `servers`)
 * that `--from vscode` reads, and dropped `envFile` without a word; after `mcp connect
 * claude-code`, `mcp import --from claude-code` imported Wisp's own gateway, which, activated,
 * looped on tool-list updates. A real daemon, real files, wispctl as a user runs it.
 */
const home = tempDir();
const clientHome = path.join(home.path, 'home');
const env = daemonEnv({ HOME: clientHome });
let daemon: RunningDaemon;
let client: WispClient;

const SANDBOX_NOTE =
  'the local ones run sandboxed: no network, their cwd only, nothing else of yours (not your home, not other projects); a path their args name is not granted by itself. See and grant with: wispctl mcp sandbox NAME';
const ctl = (args: string[]) => runWispctl(['--socket', daemon.socket, ...args], { env });
const names = async (): Promise<string[]> => (await client.call('services.list')).services.map((s) => s.name).sort();

function write(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text, { mode: 0o644 });
  return file;
}

beforeAll(async () => {
  daemon = await startWispd(path.join(home.path, 'data'), { env });
  client = await daemon.connect();
});

afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('mcp import FILE', () => {
  it('services.import itself reads JSON with comments (the panel\'s import, any client), as wispctl does', async () => {
    const content = `{
  // pasted from VS Code
  "servers": { /* one */ "vs-pasted": { "type": "stdio", "command": "${process.execPath}", "args": ["${scenarioServer}", "a // not a comment"], }, },
}`;
    const result = await client.call('services.import', { content, file: 'pasted mcp.json', storage: 'session' });
    expect(result.imported.map((s) => [s.name, s.args])).toEqual([['vs-pasted', [scenarioServer, 'a // not a comment']]]);
    await expect(client.call('services.import', { content: '{ "servers": { /* never closed ', storage: 'session' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await client.call('services.delete', { name: 'vs-pasted' });
  });

  it('reads VS Code\'s own mcp.json (comments, trailing commas, servers, ${env:NAME}) as --from vscode does', async () => {
    const file = write(
      path.join(home.path, 'workspace', '.vscode', 'mcp.json'),
      `{
  // VS Code's format: "servers", comments, trailing commas, inputs.
  "inputs": [{ "type": "promptString", "id": "token", "password": true, }],
  "servers": {
    /* a local server */
    "vs-local": { "type": "stdio", "command": "${process.execPath}", "args": ["${scenarioServer}", "\${env:HOME}/x", "keep ,] this"], },
    "vs-remote": { "type": "http", "url": "https://example.com/mcp", },
  },
}
`,
    );
    const result = await ctl(['mcp', 'import', file, '--session']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`imported vs-local (stdio, disabled, sandboxed)\nimported vs-remote (http, disabled)\n${SANDBOX_NOTE}\ntrust and start each with: wispctl mcp activate NAME\n`);
    const { service } = await client.call('services.get', { name: 'vs-local' });
    // Read as --from vscode reads it: ${env:NAME} becomes ${NAME}; a string that looks like a trailing comma stays whole.
    expect(service.args).toEqual([scenarioServer, '${HOME}/x', 'keep ,] this']);
    expect(service.origin).toMatchObject({ kind: 'import', file });
  });

  it('warns about each envFile, which it never reads, naming the entry and the file', async () => {
    const dotenv = write(path.join(home.path, 'workspace', '.env'), 'API_TOKEN=dotenv-secret-7731\n');
    const file = write(
      path.join(home.path, 'workspace', 'with-envfile.json'),
      JSON.stringify({
        servers: {
          'env-one': { command: process.execPath, args: [scenarioServer], envFile: dotenv },
          'env-two': { command: process.execPath, args: [scenarioServer, '--tools', '2'], envFile: '${workspaceFolder}/.env', env: { MODE: 'x' } },
        },
      }),
    );
    const result = await ctl(['mcp', 'import', file, '--session']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toContain(
      `warning: entry "env-one" in ${file} has envFile ${JSON.stringify(dotenv)}: Wisp does not read env files, so none of its variables are set for env-one; set each one the server needs with wispctl mcp env set env-one VAR (or write it in the entry's env)`,
    );
    expect(lines.filter((l) => l.startsWith('warning: entry "env-two"') && l.includes('has envFile "${workspaceFolder}/.env"'))).toHaveLength(1);
    // Never read: the value is nowhere, and the service has only the variables its entry names.
    expect((await client.call('services.get', { name: 'env-one' })).service.env).toEqual([]);
    expect((await client.call('services.get', { name: 'env-two' })).service.env).toEqual([{ name: 'MODE', storage: 'session', plain: true }]);
    expect(JSON.stringify(await client.call('services.list'))).not.toContain('dotenv-secret-7731');
  });
});

describe('Wisp\'s own gateway as a server of Wisp', () => {
  it('mcp import --from claude-code after mcp connect-client claude-code skips Wisp\'s entry with a note, and imports the rest', async () => {
    write(path.join(clientHome, '.claude.json'), JSON.stringify({ numStartups: 1, mcpServers: { 'code-tool': { type: 'stdio', command: process.execPath, args: [scenarioServer] } } }));
    const connect = await ctl(['mcp', 'connect-client', 'claude-code', '--yes']);
    expect(connect.code, connect.stderr).toBe(0);
    const written = JSON.parse(readFileSync(path.join(clientHome, '.claude.json'), 'utf8')) as { mcpServers: Record<string, { args: string[] }> };
    expect(written.mcpServers.wisp?.args).toEqual([wispctlBin, '--socket', daemon.socket, 'mcp', 'serve']);

    const result = await ctl(['mcp', 'import', '--from', 'claude-code', '--session']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'imported code-tool (stdio, disabled, sandboxed)',
      expect.stringMatching(/^skipped wisp: SELF_GATEWAY: wisp runs Wisp's own gateway \(wispctl mcp serve\): it would serve the daemon's services back to it, so each tool-list change would echo in a loop\. .*skipped$/),
      SANDBOX_NOTE,
      'trust and start each with: wispctl mcp activate NAME',
      '',
    ]);
    expect(await names()).not.toContain('wisp');
  });

  it('registering the gateway (mcp add, services.register) or editing a service into it is refused with SELF_GATEWAY, nothing stored', async () => {
    const gateway = [process.execPath, wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'];
    const added = await ctl(['mcp', 'add', 'loop', '--', ...gateway]);
    expect(added.code).toBe(7);
    expect(added.stderr).toMatch(/^wispctl: loop runs Wisp's own gateway \(wispctl mcp serve\).*not registered \(nothing was stored\) \(SELF_GATEWAY\)\n$/s);
    await expect(client.call('services.register', { name: 'loop', command: process.execPath, args: [wispctlBin, 'mcp', 'serve'] })).rejects.toMatchObject({ code: 'SELF_GATEWAY' });
    expect(await names()).not.toContain('loop');
    const { service } = await client.call('services.register', { name: 'plain', command: process.execPath, args: [scenarioServer] });
    await expect(client.call('services.update', { id: service.id, configVersion: service.configVersion, set: { args: [wispctlBin, 'mcp', 'serve'] } })).rejects.toMatchObject({ code: 'SELF_GATEWAY' });
    expect((await client.call('services.get', { id: service.id })).service).toMatchObject({ args: [scenarioServer], configVersion: service.configVersion });
    await client.call('services.delete', { id: service.id });
  });

  it('a gateway stored before that rule (an older import) is refused at activation with SELF_GATEWAY before anything runs', async () => {
    const older = tempDir();
    const at = '2026-01-01T00:00:00.000Z';
    const stored = { id: '3f0c8a2e-6b1d-4c5e-9a7f-2d3e4f5a6b7c', name: 'loop', command: process.execPath, args: [wispctlBin, '--socket', daemon.socket, 'mcp', 'serve'], cwd: null, env: [], enabled: false, configVersion: 1, createdAt: at, updatedAt: at };
    writeFileSync(path.join(older.path, 'mcp-servers.json'), JSON.stringify({ schemaVersion: 1, services: [stored] }), { mode: 0o600 });
    const old = await startWispd(older.path, { env });
    try {
      const c = await old.connect();
      const seen: WispEvent[] = [];
      c.onEvent((e) => seen.push(e));
      await c.call('events.subscribe', {});
      const activate = await runWispctl(['--socket', old.socket, 'mcp', 'activate', 'loop', '--yes'], { env });
      expect(activate.code).toBe(7);
      expect(activate.stderr).toMatch(/^wispctl: loop runs Wisp's own gateway \(wispctl mcp serve\).*not activated; remove it with wispctl mcp remove loop \(SELF_GATEWAY\)\n$/s);
      const { service } = await c.call('services.get', { name: 'loop' });
      expect(service.connection.status).toBe('disabled');
      // Nothing started: not one state change or tool-list event for it.
      await c.call('daemon.status');
      expect(seen.filter((e) => JSON.stringify(e).includes(service.id))).toEqual([]);
      await expect(c.call('services.activate', { id: service.id, configVersion: service.configVersion })).rejects.toMatchObject({ code: 'SELF_GATEWAY' });
      await c.call('daemon.shutdown');
      await old.exited;
    } finally {
      older.remove();
    }
  });

  it('a project source that lists the gateway: the entry is skipped with SELF_GATEWAY, the other entries are used', async () => {
    const project = path.join(home.path, 'project');
    write(
      path.join(project, '.mcp.json'),
      JSON.stringify({ mcpServers: { 'wisp-here': { command: 'wispctl', args: ['mcp', 'serve', '--services', 'a'] }, 'project-tool': { command: process.execPath, args: [scenarioServer, '--tools', '3'] } } }),
    );
    const view = await client.call('sources.addProject', { directory: project });
    expect(view.report?.skipped).toEqual([{ name: 'wisp-here', origin: { source: 'project', file: path.join(project, '.mcp.json'), plugin: null }, reason: expect.stringContaining('SELF_GATEWAY: wisp-here runs Wisp\'s own gateway') as string, code: 'SELF_GATEWAY' }]);
    expect(await names()).toContain('project-tool');
    expect(await names()).not.toContain('wisp-here');
  });

  it('one it cannot tell apart (behind a wrapper) still cannot loop for ever: the list_changed bound stops it with LIMIT_EXCEEDED', async () => {
    // A script that runs `wispctl --socket S mcp serve` without saying so in the entry.
    const wrapper = write(
      path.join(home.path, 'wrapper.mjs'),
      `process.argv.splice(2, 0, '--socket', ${JSON.stringify(daemon.socket)}, 'mcp', 'serve');\nawait import(${JSON.stringify(pathToFileURL(wispctlBin).href)});\n`,
    );
    const peer = (await client.call('services.register', { name: 'loop-peer', command: process.execPath, args: [scenarioServer, '--tools', '2'] })).service;
    await client.call('services.activate', { id: peer.id, configVersion: peer.configVersion });
    // Sandboxed (the default), the wrapper could not even reach the control socket: the
    // sandbox hides it. Unsandboxed, as a service registered before sandboxing runs, the bound
    // is what stops it.
    const hidden = (await client.call('services.register', { name: 'hidden-loop', command: process.execPath, args: [wrapper], sandbox: { enabled: false, read: [], write: [], net: { mode: 'none' } } })).service;
    const log = await EventLog.follow(client);
    await client.call('services.activate', { id: hidden.id, configVersion: hidden.configVersion });
    let refreshed = 0;
    // Unbounded, it ran on (about 1,000 events in 18 s at 87% CPU): give up at 150 tool-list updates.
    const ended = (await log.waitFor(
      (e) => (e.type === 'service.tools' && e.service.id === hidden.id && ++refreshed > 150) || (e.type === 'service.state' && e.service.id === hidden.id && e.connection.status === 'failed'),
    )) as Extract<WispEvent, { type: 'service.state' }>;
    expect(ended.connection).toMatchObject({ status: 'failed', code: 'LIMIT_EXCEEDED', message: expect.stringContaining('notifications/tools/list_changed') as string });
    expect(refreshed).toBeLessThan(80);
    await client.call('services.disable', { id: peer.id });
  }, 60_000);
});
