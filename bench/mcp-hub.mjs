// mcp-hub 4.2.1, the peer the bench compares wispd against: installed on first use into
// .cache/mcp-hub-4.2.1 (not a dependency), started on a free port with a config of its own,
// and called over its REST API (POST /api/servers/tools) through a keep-alive undici Pool.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { track } from './common.mjs';

export const MCP_HUB_VERSION = '4.2.1';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache', `mcp-hub-${MCP_HUB_VERSION}`);

/**
 * The path of mcp-hub's CLI script (one bundled file, no runtime dependencies), installed on
 * first use by the machine's own npm (its config carries any proxy CA) with --ignore-scripts.
 * Built in a directory of its own and renamed into place, so a half-built copy is never used.
 */
export async function mcpHubBin() {
  const cli = path.join(root, 'node_modules', 'mcp-hub', 'dist', 'cli.js');
  if (existsSync(path.join(root, 'ready'))) return cli;
  const building = `${root}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  mkdirSync(building, { recursive: true });
  try {
    await new Promise((resolve, reject) => {
      execFile('npm', ['install', '--prefix', building, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', `mcp-hub@${MCP_HUB_VERSION}`],
        { cwd: building, maxBuffer: 16 * 1024 * 1024 },
        (error, _stdout, stderr) => (error ? reject(new Error(`installing mcp-hub@${MCP_HUB_VERSION} failed: ${error.message}\n${stderr}`)) : resolve()));
    });
    writeFileSync(path.join(building, 'ready'), '');
    rmSync(root, { recursive: true, force: true });
    try {
      renameSync(building, root);
    } catch (error) {
      if (!existsSync(path.join(root, 'ready'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return cli;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts mcp-hub with `config` ({ mcpServers: { name: { command, args, disabled? } } }) in
 * `dir` (its HOME and XDG dirs, so it never touches the user's), and resolves once
 * GET /api/health says the hub is ready and every enabled server is connected.
 * Returns { child, url, call(server, tool, args), health(), stop() }.
 */
export async function startMcpHub({ config, dir, port, timeoutMs = 30_000 }) {
  const cli = await mcpHubBin();
  const home = path.join(dir, 'home');
  // A fresh marketplace cache: otherwise the hub fetches its catalogue from the network at
  // every start (and falls back to curl), which has nothing to do with calling tools.
  const cache = path.join(home, 'data', 'mcp-hub', 'cache');
  mkdirSync(cache, { recursive: true });
  writeFileSync(path.join(cache, 'registry.json'), JSON.stringify({ registry: { version: 'bench', generatedAt: 0, totalServers: 1, servers: [{ id: 'bench', name: 'bench' }] }, lastFetchedAt: Date.now(), serverDocumentation: {} }));
  const configFile = path.join(dir, 'mcp-hub.json');
  writeFileSync(configFile, JSON.stringify(config));
  const listenPort = port ?? (await freePort());
  const child = track(spawn(process.execPath, [cli, '--port', String(listenPort), '--config', configFile], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: path.join(home, 'data'), XDG_STATE_HOME: path.join(home, 'state'), XDG_CONFIG_HOME: path.join(home, 'config') },
  }));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => (stderr = (stderr + text).slice(-4000)));
  let exited = null;
  child.once('exit', (code, signal) => (exited = `mcp-hub exited (${code ?? signal})\n${stderr}`));
  const url = `http://127.0.0.1:${listenPort}`;
  const health = async () => {
    const { statusCode, body } = await request(`${url}/api/health`);
    if (statusCode !== 200) throw new Error(`GET /api/health: ${statusCode} ${await body.text()}`);
    return body.json();
  };
  const enabled = Object.entries(config.mcpServers).filter(([, s]) => !s.disabled).map(([name]) => name);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(exited);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`mcp-hub not ready within ${timeoutMs} ms\n${stderr}`);
    }
    const state = await health().catch(() => null);
    const connected = new Set((state?.servers ?? []).filter((s) => s.status === 'connected').map((s) => s.name));
    if (state?.state === 'ready' && enabled.every((name) => connected.has(name))) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // 16 connections: enough for 16 calls in flight without queueing in the client.
  const pool = new Pool(url, { connections: 16 });
  const call = async (server, tool, args) => {
    const { statusCode, body } = await pool.request({ path: '/api/servers/tools', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ server_name: server, tool, arguments: args }) });
    const reply = await body.json();
    if (statusCode !== 200) throw new Error(`mcp-hub POST /api/servers/tools: ${statusCode} ${JSON.stringify(reply).slice(0, 500)}`);
    return reply.result;
  };
  const stop = async () => {
    await pool.close();
    if (exited) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  };
  return { child, url, call, health, stop };
}
