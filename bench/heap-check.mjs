// Run by bench/run.js as `node --expose-gc bench/heap-check.mjs`: a daemon in this process,
// blocks of approved tool calls, and the heap after a full GC after each block. A heap that
// stays flat after the first block (bounded histories filling) is settling; one that grows
// every block is a leak. Prints one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WispClient, resolvePaths } from '../dist/control/index.js';
import { Daemon, createLogger } from '../dist/daemon/index.js';
import { MemorySecretStore, Redactor } from '../dist/secrets/index.js';

const BLOCK = Number(process.env.BENCH_HEAP_BLOCK ?? 10_000);
const BLOCKS = Number(process.env.BENCH_HEAP_BLOCKS ?? 4);
const server = fileURLToPath(new URL('../fixtures/servers/scenario-server.mjs', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'wisp-heap-'));
const redactor = new Redactor();
const daemon = await Daemon.start({
  paths: resolvePaths({ dataDir: dir, env: {} }),
  logger: createLogger({ level: 'warn', pretty: false, redactor }),
  redactor,
  version: 'bench',
  keychain: new MemorySecretStore(),
});
const client = await WispClient.connect(daemon.paths.socket);
const { service } = await client.call('services.register', { name: 'heap', command: process.execPath, args: [server] });
await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
client.onEvent((event) => {
  if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
});
await client.call('events.subscribe', {});
const caller = await WispClient.connect(daemon.paths.socket);
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const after = [heap()];
for (let block = 0; block < BLOCKS; block++) {
  for (let i = 0; i < BLOCK; i++) await caller.call('tools.call', { serviceId: service.id, toolName: 'echo', arguments: { text: `h${i}` } });
  after.push(heap());
}
await daemon.stop('heap check done');
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ block: BLOCK, heapUsedAfterGc: after }));
process.exit(0);
