import { mkdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceCli } from '../../scripts/npm12-runtime.mjs';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { repoRoot, tempDir } from '../helpers/wispd.js';

/**
 * The official MCP conformance suite, client scenarios, against scripts/conformance-client.mjs
 * (a real daemon driven over its socket). Its CLI needs Node 22: the one ensureNpm12()
 * installs from the npm registry. Known failures are in test/conformance-baseline.yml.
 */
let node22: string;
const out = tempDir();
let cli: string;

beforeAll(async () => {
  node22 = path.join(await ensureNpm12(), 'node');
  cli = await conformanceCli();
}, NPM12_SETUP_MS + 120_000);
afterAll(() => out.remove());

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(node22, [cli, ...args], { cwd: out.path, env: { PATH: process.env.PATH, HOME: out.path }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Scenario names from `conformance list --client`. */
async function clientScenarios(): Promise<string[]> {
  const { output } = await run(['list', '--client']);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] ?? '');
}

describe('the MCP conformance suite (client scenarios)', () => {
  it('passes every scenario but the known failures of the baseline', async () => {
    const command = `${process.execPath} ${path.join(repoRoot, 'scripts', 'conformance-client.mjs')}`;
    const baseline = path.join(repoRoot, 'test', 'conformance-baseline.yml');
    const names = await clientScenarios();
    // One at a time: some scenarios time the client (sse-retry waits for the server's retry
    // interval), and a machine busy with all of them at once makes those figures noise.
    const results: { name: string; passed: boolean; checks: string; code: number | null; output: string }[] = [];
    for (const name of names) {
      const { code, output } = await run(['client', '--command', command, '--scenario', name, '--expected-failures', baseline, '-o', path.join(out.path, 'results')]);
      const checks = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
      const passed = checks !== null && checks[3] === '0' && checks[4] === '0' && checks[1] === checks[2];
      results.push({ name, passed, checks: checks?.[0] ?? 'no result', code, output });
    }
    const passed = results.filter((r) => r.passed).length;
    const figure = `conformance: ${passed}/${results.length} client scenarios passed`;
    console.log(figure);
    mkdirSync(path.join(repoRoot, 'test-results'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'test-results', 'conformance.txt'), `${figure}\n${results.map((r) => `${r.passed ? 'pass' : 'FAIL'}  ${r.name}: ${r.checks}`).join('\n')}\n`);
    expect(results.length).toBeGreaterThan(20);
    // Exit 0 means: passed and not in the baseline, or failed as the baseline expects.
    for (const r of results) expect(r.code, `${r.name}: ${r.checks}\n${r.output.slice(-3000)}`).toBe(0);
  }, 600_000);
});
