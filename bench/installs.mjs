// The install pipeline vs the same npm commands by hand, both against a local registry.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WispClient } from '../dist/control/client.js';
import { LocalRegistry } from '../fixtures/npm/registry.mjs';
import { npm12Bin } from '../scripts/npm12-runtime.mjs';
import { compare, envInt, exited, root, startDaemon, track } from './common.mjs';

function runNode(node, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(node, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: `${path.dirname(node)}:/usr/bin:/bin`, HOME: cwd } }));
    let err = '';
    child.stderr.on('data', (b) => (err += b));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.slice(0, 3).join(' ')} exited ${code}: ${err}`))));
  });
}

/**
 * The install pipeline (plan approved, lock, verify, npm ci, bin check, registration) vs the
 * same two npm commands run by hand with the same flags, both against a local registry
 * (fixtures/npm) with warm caches, so the network does not dominate either side. By hand
 * means the same sandbox flags (empty configs, own cache, --ignore-scripts) in a fresh dir.
 */
export async function installs(dataDir) {
  const runs = envInt('BENCH_INSTALL_RUNS', 5);
  const bin = await npm12Bin();
  const node = path.join(bin, 'node');
  const npmCli = realpathSync(path.join(bin, 'npm'));
  const registry = await LocalRegistry.start();
  const hello = readFileSync(path.join(root, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
  await registry.publish({ name: '@fixture/case-lib', version: '2.1.0', files: { 'index.js': 'exports.upper = (s) => s.toUpperCase();\n' } });
  await registry.publish({ name: 'greeting-lib', version: '1.4.0', dependencies: { '@fixture/case-lib': '^2.0.0' }, files: { 'index.js': 'exports.greet = (n) => n;\n' } });
  await registry.publish({ name: 'hello-mcp', version: '1.0.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': hello } });
  const daemon = await startDaemon(dataDir);
  const client = await WispClient.connect(daemon.socket);
  const approver = await WispClient.connect(daemon.socket);
  approver.onEvent((event) => {
    if (event.type === 'approval.requested' && event.approval.kind === 'install') void approver.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
  });
  await approver.call('events.subscribe', {});
  await client.call('installs.setSettings', { runtimeDirs: [bin], registry: registry.url });
  const byHandRoot = path.join(dataDir, 'by-hand');
  const flags = (cache) => [`--userconfig=${path.join(byHandRoot, 'u')}`, `--globalconfig=${path.join(byHandRoot, 'g')}`, `--cache=${cache}`, `--registry=${registry.url}`, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'];
  mkdirSync(byHandRoot, { recursive: true });
  writeFileSync(path.join(byHandRoot, 'u'), '');
  writeFileSync(path.join(byHandRoot, 'g'), '');
  const byHand = async (i) => {
    const cwd = path.join(byHandRoot, `p${i}`);
    mkdirSync(cwd, { recursive: true });
    writeFileSync(path.join(cwd, 'package.json'), JSON.stringify({ name: 'by-hand', version: '0.0.0', private: true, dependencies: { 'hello-mcp': '1.0.0' } }));
    const t = performance.now();
    await runNode(node, [npmCli, 'install', '--package-lock-only', ...flags(path.join(byHandRoot, 'cache'))], cwd);
    await runNode(node, [npmCli, 'ci', ...flags(path.join(byHandRoot, 'cache'))], cwd);
    return performance.now() - t;
  };
  // sandbox: every npm in bubblewrap behind its egress proxy (the default), or as you (install settings --no-sandbox).
  const pipeline = async (i, sandbox = true) => {
    await client.call('installs.setSettings', { sandbox });
    const { plan } = await client.call('installs.plan', { package: 'hello-mcp', version: '1.0.0', bin: 'hello-mcp', args: ['--run', String(i), ...(sandbox ? [] : ['--open'])] });
    const t = performance.now();
    const result = await client.call('installs.start', { planDigest: plan.digest });
    const ms = performance.now() - t;
    await client.call('services.delete', { id: result.service.id });
    return ms;
  };
  // Warm both caches once, then interleave.
  await byHand(-1);
  await pipeline(-1);
  await pipeline(-1, false);
  const subject = [];
  const baseline = [];
  const open = [];
  for (let i = 0; i < runs; i++) {
    subject.push(await pipeline(i));
    baseline.push(await byHand(i));
    open.push(await pipeline(i, false));
  }
  await client.call('daemon.shutdown');
  await exited(daemon.child);
  await registry.close();
  const npmVersion = JSON.parse(readFileSync(path.join(path.dirname(npmCli), '..', 'package.json'), 'utf8')).version;
  return [
    compare(
      'install pipeline (3 packages)',
      subject,
      baseline,
      `installs.start sandboxed (approval answered at once, lock, verify, npm ci, bin check, registration) vs \`npm install --package-lock-only\` + \`npm ci\` by hand, same npm ${npmVersion}, same local registry, warm caches; ${runs} runs`,
    ),
    compare(
      'install pipeline, npm sandboxed vs not',
      subject,
      open,
      `the same installs.start with every npm in bubblewrap behind its egress proxy (the default) vs install settings --no-sandbox, interleaved; ${runs} runs`,
    ),
  ];
}

