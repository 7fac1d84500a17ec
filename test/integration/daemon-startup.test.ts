import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { RECORDER } from '../helpers/load-recorder.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir } from '../helpers/wispd.js';

/**
 * Issue 14: wispd starts light. A daemon with 16 services configured (none active: services
 * are never activated at start), model and install settings and a session on disk, started
 * with a module-load recorder (helpers/load-recorder.ts) and asked a few things, has loaded
 * none of what only an activation, a login, an install, a task, a keychain access or rpc.discover
 * needs.
 */

const home = tempDir();
const dataDir = path.join(home.path, 'data');
const recorder = path.join(home.path, 'recorder.mjs');
const server = path.join(repoRoot, 'fixtures', 'servers', 'scenario-server.mjs');
const nodeModules = pathToFileURL(path.join(repoRoot, 'node_modules')).href;

afterAll(() => {
  killLeftovers();
  home.remove();
});

/** Packages (or files of one) the daemon must not load until they are needed. */
const LATE = [
  '@modelcontextprotocol/sdk/', // an activation or a login
  'zod/',
  '@sinclair/typebox/', // rpc.discover (the checks are generated at build time)
  'ajv/dist/ajv.js', // the compiler: tools' input schemas, host tools (its run-time helpers are fine)
  'ajv/dist/core.js',
  'ajv/dist/compile/',
  're2js/', // tools' input schemas
  'semver/', // an install
  'undici/', // a model request
  'pino-pretty/', // pretty logs only
  '@napi-rs/keyring', // the first keychain access (and its native module)
];

function late(loaded: readonly string[]): string[] {
  return loaded.filter((url) => LATE.some((prefix) => url.startsWith(`${nodeModules}/${prefix}`)));
}

/** Starts wispd with the recorder; `run` talks to it; then it is shut down and what it loaded returned. */
async function recorded(name: string, run: (client: WispClient) => Promise<void>): Promise<string[]> {
  const record = path.join(home.path, `${name}.txt`);
  writeFileSync(record, '');
  const env = daemonEnv({ NODE_OPTIONS: `--import=${pathToFileURL(recorder).href}`, WISP_LOAD_RECORD: record });
  const daemon = await startWispd(dataDir, { env });
  const client = await daemon.connect();
  await run(client);
  await client.call('daemon.shutdown');
  expect((await daemon.exited).code).toBe(0);
  return [...new Set(readFileSync(record, 'utf8').split('\n'))].filter((url) => url.startsWith('file:'));
}

describe('what wispd loads when it starts', () => {
  it('with 16 services configured, settings and a transcript on disk: none of what comes later', async () => {
    writeFileSync(recorder, RECORDER);
    // Seeding: services, settings and a session (its transcript is read back at start).
    await recorded('seed', async (client) => {
      for (let i = 0; i < 16; i++) await client.call('services.register', { name: `svc-${i}`, command: process.execPath, args: [server, '--tools', '4'] });
      await client.call('model.setSettings', { maxRetries: 2 });
      await client.call('installs.setSettings', { timeoutMs: 60_000 });
      await client.call('sessions.create', { title: 'kept' });
    });
    let services = 0;
    let sessions = 0;
    const loaded = await recorded('start', async (client) => {
      await client.call('daemon.status');
      services = (await client.call('services.list')).services.length;
      expect((await client.call('model.getSettings')).settings.maxRetries).toBe(2);
      sessions = (await client.call('sessions.list')).sessions.length;
    });
    expect(services).toBe(16);
    expect(sessions).toBe(1);
    expect(loaded).toContain(pathToFileURL(path.join(repoRoot, 'dist', 'daemon', 'main.js')).href);
    expect(late(loaded)).toEqual([]);
  });

  it('the recorder sees them once they are needed: rpc.discover loads TypeBox, an activation the MCP SDK', async () => {
    const loaded = await recorded('later', async (client) => {
      await client.call('rpc.discover');
      const first = (await client.call('services.list')).services[0];
      if (first === undefined) throw new Error('no service registered');
      const { service } = await client.call('services.activate', { id: first.id, configVersion: first.configVersion });
      expect(service.connection.status).toBe('active');
    });
    const found = late(loaded);
    expect(found.some((url) => url.startsWith(`${nodeModules}/@sinclair/typebox/`))).toBe(true);
    expect(found.some((url) => url.startsWith(`${nodeModules}/@modelcontextprotocol/sdk/`))).toBe(true);
    expect(found.some((url) => url.startsWith(`${nodeModules}/ajv/dist/compile/`))).toBe(true);
    // A local (stdio) server's activation: none of the remote transports (the SDK's streamable HTTP, SSE).
    const remote = loaded.filter((url) => /\/client\/(streamableHttp|sse)\.js$/.test(url) || url.endsWith('/dist/mcp/remote-transports.js'));
    expect(remote).toEqual([]);
  });
});
