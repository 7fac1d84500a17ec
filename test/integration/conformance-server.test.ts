import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Elicitation } from '../../src/core/index.js';
import { conformanceCli } from '../../scripts/npm12-runtime.mjs';
import { startBearerRelay } from '../helpers/bearer-relay.js';
import { human } from '../helpers/gateway.js';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, repoRoot, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * The official MCP conformance suite, server scenarios, against `wispctl mcp serve --http`
 * (the suite tests servers over streamable HTTP only). Its client connects to a bare URL
 * and sends no header, so a relay in front adds the gateway's bearer token
 * (test/helpers/bearer-relay.ts); Host and Origin checks stay the gateway's. Behind the
 * gateway: a daemon with the scenario fixture server active. Each scenario gets a gateway of
 * its own: the suite's client never ends its HTTP session, and the gateway holds at most 32.
 * Known failures, with their reasons, are the `server:` list of test/conformance-baseline.yml.
 * The figure goes to test-results/conformance-server.txt, which .ci/run prints.
 */
let node22: string;
let cli: string;
const out = tempDir();
let daemon: RunningDaemon;
let client: WispClient;
let asked: Awaited<ReturnType<typeof human>>;
const answered: Elicitation[] = [];

beforeAll(async () => {
  [node22, cli] = await Promise.all([ensureNpm12().then((bin) => path.join(bin, 'node')), conformanceCli()]);
  daemon = await startWispd(path.join(out.path, 'data'));
  client = await daemon.connect();
  await registerScenario(client, 'tools');
  await activate(client, 'tools');
  // The suite's tools by their names, for the --service setup (SETUPS).
  await registerScenario(client, 'reference', ['--conformance-tools']);
  await activate(client, 'reference');
  // The same server with its media setting on (issue 35: media by choice), for the third setup.
  const { service: pictures } = await registerScenario(client, 'pictures', ['--conformance-tools']).then((s) => client.call('services.update', { id: s.id, set: { media: true } }));
  expect(pictures.media).toBe(true);
  await activate(client, 'pictures');
  // A human at another connection approves every call the suite makes.
  asked = await human(await daemon.connect(), () => 'approve');
  // The elicitations answered, and by whom (this connection only watches: it is not asked, and answers none).
  const watcher = await daemon.connect();
  watcher.onEvent((event) => {
    if (event.type === 'elicitation.resolved') answered.push(event.elicitation);
  });
  await watcher.call('events.subscribe', { types: ['elicitation.resolved'] });
}, NPM12_SETUP_MS + 120_000);
afterAll(async () => {
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  out.remove();
});

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(node22, [cli, ...args], { cwd: out.path, env: { PATH: process.env.PATH, HOME: out.path }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** `wispctl mcp serve --http`: the process, and the URL and token it printed once on stdout. */
async function startGateway(serveArgs: readonly string[]): Promise<{ child: ChildProcessWithoutNullStreams; url: string; token: string }> {
  const child = spawn(process.execPath, [wispctlBin, '--socket', daemon.socket, 'mcp', 'serve', '--http', ...serveArgs], { stdio: 'pipe', env: { PATH: process.env.PATH } });
  let printed = '';
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = /^(http:\/\/127\.0\.0\.1:\d+\/mcp)\nAuthorization: Bearer (\S+)\n/m.exec(printed);
      if (match?.[1] !== undefined && match[2] !== undefined) resolve({ child, url: match[1], token: match[2] });
    });
    child.once('exit', (code) => reject(new Error(`wispctl mcp serve --http exited (${String(code)}) before printing its URL: ${errors}`)));
  });
}

async function stopGateway(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Scenario names from `conformance list --server`. */
async function serverScenarios(): Promise<string[]> {
  const { output } = await run(['list', '--server']);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] ?? '');
}

/**
 * The three setups: every service (names SERVICE__TOOL, so a scenario that calls a tool by the
 * suite's own name finds none), and `--service reference` (the scenario server with the
 * tools the suite calls, under their own names, as if the suite were connected to it, through
 * Wisp's approvals), and the same with the service's media setting on (`--service pictures`).
 * Each has its baseline of known failures and its figure.
 */
const SETUPS = [
  { label: 'wispctl mcp serve', serveArgs: [], service: null, baseline: 'conformance-baseline.yml', figure: 'conformance-server.txt' },
  { label: 'wispctl mcp serve --service reference', serveArgs: ['--service', 'reference'], service: 'reference', baseline: 'conformance-baseline-service.yml', figure: 'conformance-server-service.txt' },
  // Its media setting on: images, audio and binary resources pass whole to the client.
  { label: 'wispctl mcp serve --service pictures (media on)', serveArgs: ['--service', 'pictures'], service: 'pictures', baseline: 'conformance-baseline-media.yml', figure: 'conformance-server-media.txt' },
] as const;

describe('the MCP conformance suite (server scenarios) against wispctl mcp serve', () => {
  it.each(SETUPS)('$label passes every scenario but the known failures of its baseline', async (setup) => {
    const baseline = path.join(repoRoot, 'test', setup.baseline);
    const names = await serverScenarios();
    const results: { name: string; passed: boolean; checks: string; code: number | null; output: string }[] = [];
    for (const name of names) {
      const gateway = await startGateway(setup.serveArgs);
      const relay = await startBearerRelay(gateway.url, gateway.token);
      try {
        const { code, output } = await run(['server', '--url', relay.url, '--scenario', name, '--expected-failures', baseline, '-o', path.join(out.path, 'results')]);
        const checks = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
        const passed = checks !== null && checks[3] === '0' && checks[4] === '0' && checks[1] === checks[2];
        results.push({ name, passed, checks: checks?.[0] ?? 'no result', code, output });
      } finally {
        await relay.close();
        await stopGateway(gateway.child);
      }
    }
    const passed = results.filter((r) => r.passed).length;
    const figure = `conformance: ${passed}/${results.length} server scenarios passed (${setup.label})`;
    console.log(figure);
    mkdirSync(path.join(repoRoot, 'test-results'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'test-results', setup.figure), `${figure}\n${results.map((r) => `${r.passed ? 'pass' : 'FAIL'}  ${r.name}: ${r.checks}`).join('\n')}\n`);
    expect(results.length).toBeGreaterThan(25);
    // The gateway's own door and the protocol's basics must hold whatever the baseline says.
    for (const name of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(results.find((r) => r.name === name)?.passed, name).toBe(true);
    if (setup.service !== null) {
      // Its tool-call passes come from the tools themselves, approved by the human: not from an error result.
      const tools = new Set(asked.requested.map((a) => `${a.summary.serviceName}/${a.summary.toolName}`));
      const called = ['test_simple_text', 'test_embedded_resource', 'test_error_handling', 'test_tool_with_logging', ...(setup.service === 'pictures' ? ['test_image_content', 'test_audio_content', 'test_multiple_content_types'] : [])];
      for (const tool of called) expect(tools, tool).toContain(`${setup.service}/${tool}`);
      // Its elicitation passes come from the server's own requests, answered by the suite's client through the gateway (not by Wisp, not an error).
      const elicited = answered.filter((e) => e.service.name === setup.service && e.status === 'accepted' && e.by?.includes('(mcp:conformance-test-client)') === true);
      expect(elicited.map((e) => e.message).sort()).toEqual(['Please provide your information', 'Please review and update the form fields with defaults', 'Please select options from the enum fields']);
    }
    // Exit 0 means: passed and not in the baseline, or failed as the baseline expects.
    for (const r of results) expect(r.code, `${r.name}: ${r.checks}\n${r.output.slice(-3000)}`).toBe(0);
  }, 900_000);
});
