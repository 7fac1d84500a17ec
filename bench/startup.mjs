// Start-up figures: activating a 64-tool server, cold start of wispd with 16 services vs a
// bare Node listener, and the wispctl process vs a minimal node -e client.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { WispClient } from '../dist/control/client.js';
import { RUNS, compare, exited, root, server, startDaemon, track } from './common.mjs';

export async function activation(dataDir) {
  const daemon = await startDaemon(dataDir);
  const client = await WispClient.connect(daemon.socket);
  const { service } = await client.call('services.register', { name: 'bench', command: process.execPath, args: [server, '--tools', '62'] });
  const viaDaemon = [];
  const direct = [];
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so drift on a shared machine hits both sides alike.
    let t = performance.now();
    const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
    viaDaemon.push(performance.now() - t);
    if (active.connection.status !== 'active' || active.connection.toolCount !== 64) throw new Error(`activation failed: ${JSON.stringify(active.connection)}`);
    await client.call('services.disable', { id: service.id });

    t = performance.now();
    const sdk = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [server, '--tools', '62'], stderr: 'ignore' });
    await sdk.connect(transport);
    let cursor;
    let count = 0;
    do {
      const page = await sdk.listTools(cursor === undefined ? {} : { cursor });
      count += page.tools.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    direct.push(performance.now() - t);
    if (count !== 64) throw new Error(`direct listTools saw ${count} tools`);
    await sdk.close();
  }
  await client.call('daemon.shutdown');
  await exited(daemon.child);
  return compare(
    'activation of a 64-tool stdio server',
    viaDaemon,
    direct,
    'services.activate through the socket (spawn, initialize, discovery, 64 schema compiles, events) vs a bare SDK Client connect + full listTools on the same server',
  );
}

/** Cold start to socket ready with 16 services configured, vs a bare Node process that listens on a socket. */
export async function coldStart(dataDir) {
  const seed = await startDaemon(dataDir);
  const client = await WispClient.connect(seed.socket);
  for (let i = 0; i < 16; i++) await client.call('services.register', { name: `svc-${i}`, command: process.execPath, args: [server, '--tools', '4'] });
  await client.call('daemon.shutdown');
  await exited(seed.child);
  const bare = `const s=require('net').createServer().listen(${JSON.stringify(path.join(dataDir, 'bare.sock'))},()=>{require('fs').writeSync(3,'ready\\n');});process.on('SIGTERM',()=>{s.close();process.exit(0)})`;
  const daemonTimes = [];
  const bareTimes = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    const d = await startDaemon(dataDir);
    daemonTimes.push(performance.now() - t);
    d.child.kill('SIGTERM');
    await exited(d.child);
    t = performance.now();
    const b = track(spawn(process.execPath, ['-e', bare], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] }));
    await new Promise((resolve) => b.stdio[3].once('data', resolve));
    bareTimes.push(performance.now() - t);
    b.kill('SIGTERM');
    await exited(b);
  }
  return compare('cold start to socket ready, 16 services configured', daemonTimes, bareTimes, 'spawning wispd until its socket listens vs a bare Node process that listens on a Unix socket');
}

function timeCommand(args) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = track(spawn(process.execPath, args, { stdio: 'ignore' }));
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

export async function cliStatus(dataDir) {
  const daemon = await startDaemon(dataDir);
  const minimal = `const s=require('net').createConnection(${JSON.stringify(daemon.socket)});s.on('connect',()=>s.write(JSON.stringify({jsonrpc:'2.0',id:1,method:'daemon.status'})+'\\n'));s.on('data',()=>s.end());`;
  const cli = [];
  const raw = [];
  for (let i = 0; i < RUNS; i++) {
    cli.push(await timeCommand([path.join(root, 'bin', 'wispctl.js'), '--socket', daemon.socket, 'status']));
    raw.push(await timeCommand(['-e', minimal]));
  }
  daemon.child.kill('SIGTERM');
  await exited(daemon.child);
  return compare('wispctl status, wall time', cli, raw, 'the whole wispctl process vs a minimal node -e script that connects and sends one request');
}

