import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_FORBIDDEN_PACKAGES } from '../../layers.js';
import { RECORDER } from '../helpers/load-recorder.js';
import { daemonEnv, killLeftovers, repoRoot, startWispd, tempDir, wispctlBin, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 13: wispctl starts light. The real built bin/wispctl.js runs in a child process with
 * a module-load recorder preloaded (node --import, helpers/load-recorder.ts). None of
 * them may belong to a package only the daemon needs (TypeBox, ajv, the MCP SDK, pino, re2js,
 * undici: layers.js CLI_FORBIDDEN_PACKAGES).
 */

const home = tempDir();
const recorder = path.join(home.path, 'recorder.mjs');
let daemon: RunningDaemon;
let runs = 0;

beforeAll(async () => {
  writeFileSync(recorder, RECORDER);
  daemon = await startWispd(path.join(home.path, 'data'));
});
afterAll(async () => {
  const client = await daemon.connect();
  await client.call('daemon.shutdown');
  await daemon.exited;
  killLeftovers();
  home.remove();
});

/** Runs wispctl with the recorder; resolves its exit code, output and the files it loaded. */
function recordedRun(args: string[]): Promise<{ code: number | null; stdout: string; loaded: string[] }> {
  const record = path.join(home.path, `loads-${++runs}.txt`);
  writeFileSync(record, '');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(recorder).href, wispctlBin, '--socket', daemon.socket, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: daemonEnv({ WISP_LOAD_RECORD: record }),
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('close', (code) => {
      const loaded = [...new Set(readFileSync(record, 'utf8').split('\n'))].filter((url) => url.startsWith('file:'));
      resolve({ code, stdout, loaded });
    });
  });
}

const nodeModules = pathToFileURL(path.join(repoRoot, 'node_modules')).href;
const distCli = pathToFileURL(path.join(repoRoot, 'dist', 'cli')).href;

/** The forbidden packages among the loaded files. */
function forbidden(loaded: readonly string[]): string[] {
  return loaded.filter((url) => CLI_FORBIDDEN_PACKAGES.some((name) => url.startsWith(`${nodeModules}/${name}/`)));
}

describe('what wispctl loads when it starts', () => {
  it('status loads none of the daemon\'s packages, and far fewer files than the 227 of before', async () => {
    const run = await recordedRun(['status']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^wispd \S+ running \(pid \d+/);
    expect(run.loaded).toContain(`${distCli}/main.js`);
    expect(run.loaded.some((url) => url.startsWith(`${nodeModules}/commander/`))).toBe(true);
    expect(forbidden(run.loaded)).toEqual([]);
    expect(run.loaded.length).toBeLessThan(100);
    // Issue 14: only its own command group, and no prompt (readline) module.
    expect(run.loaded.filter((url) => url.startsWith(`${distCli}/commands/`))).toEqual([`${distCli}/commands/status.js`]);
    expect(run.loaded).not.toContain(`${distCli}/prompt.js`);
  });

  it('--help and mcp list load none of them either', async () => {
    for (const args of [['--help'], ['mcp', 'list']]) {
      const run = await recordedRun(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.loaded).toContain(`${distCli}/main.js`);
      expect(forbidden(run.loaded), args.join(' ')).toEqual([]);
    }
  });

  it('the recorder sees a forbidden package when one is loaded', async () => {
    // The daemon's own entry loads them all: proof that the check above can fail.
    const record = path.join(home.path, 'loads-daemon.txt');
    writeFileSync(record, '');
    const wispd = path.join(repoRoot, 'bin', 'wispd.js');
    await new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', pathToFileURL(recorder).href, wispd, '--version'], { stdio: 'ignore', env: daemonEnv({ WISP_LOAD_RECORD: record }) });
      child.once('close', resolve);
    });
    const loaded = [...new Set(readFileSync(record, 'utf8').split('\n'))].filter((url) => url.startsWith('file:'));
    expect(forbidden(loaded).length).toBeGreaterThan(0);
  });
});
