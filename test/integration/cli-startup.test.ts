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

const rootUrl = pathToFileURL(repoRoot).href;
const bundleUrl = pathToFileURL(path.join(repoRoot, 'dist', 'wispctl')).href;
/** The bundle's files and the modules in each (scripts/bundle-cli.js writes it at build). */
const bundled = JSON.parse(readFileSync(path.join(repoRoot, 'dist', 'wispctl', 'modules.json'), 'utf8')) as Record<string, string[]>;

/** The modules behind the loaded files, from the repository root: a bundle file stands for the modules in it. */
function sourcesOf(loaded: readonly string[]): string[] {
  return loaded.flatMap((url) => {
    if (url.startsWith(`${bundleUrl}/`)) return bundled[url.slice(bundleUrl.length + 1)] ?? [];
    return url.startsWith(rootUrl) ? [decodeURIComponent(url.slice(rootUrl.length).replace(/^\//, ''))] : [];
  });
}

/** The forbidden packages among the modules behind the loaded files. */
function forbidden(loaded: readonly string[]): string[] {
  return sourcesOf(loaded).filter((source) => CLI_FORBIDDEN_PACKAGES.some((name) => source.startsWith(`node_modules/${name}/`)));
}

describe('what wispctl loads when it starts', () => {
  it('status loads none of the daemon\'s packages, and far fewer files than the 227 of before', async () => {
    const run = await recordedRun(['status']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^wispd \S+ running \(pid \d+/);
    const sources = sourcesOf(run.loaded);
    expect(sources).toContain('dist/cli/main.js');
    expect(sources).toContain('node_modules/commander/index.js');
    expect(forbidden(run.loaded)).toEqual([]);
    // Issue 14: one bundle (scripts/bundle-cli.js), of which only the entry, the chunk runtime
    // and the status command's own files (the command, its renderer, -o wide's and the output
    // help's); no package file at run time; no prompt (readline) module.
    expect(run.loaded.filter((url) => url.startsWith(`${rootUrl}node_modules/`))).toEqual([]);
    expect(run.loaded.filter((url) => url.startsWith(`${bundleUrl}/`)).length).toBeLessThanOrEqual(6);
    expect(run.loaded).toContain(`${bundleUrl}/main.cjs`);
    expect(sources.filter((source) => source.startsWith('dist/cli/commands/'))).toEqual(['dist/cli/commands/status.js']);
    expect(sources).not.toContain('dist/cli/prompt.js');
  });

  it('status does not open stdin, which only commands that read it do', async () => {
    // process.stdin is made on first use: a stream over the terminal, pipe or file, and the
    // modules behind it, a few milliseconds of every command (src/cli/stdin.ts). Node's own
    // modules are listed by a CommonJS preload (the recorder above loads some of them itself).
    const listed = path.join(home.path, 'builtins.txt');
    const preload = path.join(home.path, 'builtins.cjs');
    writeFileSync(preload, `process.once('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, process.moduleLoadList.join('\\n')));`);
    const builtinsOf = async (args: string[]): Promise<{ code: unknown; names: string[] }> => {
      const child = spawn(process.execPath, ['--require', preload, wispctlBin, '--socket', daemon.socket, ...args], { stdio: ['ignore', 'ignore', 'ignore'], env: daemonEnv({}) });
      const code = await new Promise((resolve) => child.once('close', resolve));
      const names = readFileSync(listed, 'utf8').split('\n').filter((line) => line.startsWith('NativeModule ')).map((line) => line.slice('NativeModule '.length));
      return { code, names };
    };
    const stdinModules = (names: string[]) => names.filter((name) => /readline|fs\/streams|^tty$/.test(name));
    const status = await builtinsOf(['status']);
    expect(status.code).toBe(0);
    expect(status.names).toContain('net');
    expect(stdinModules(status.names)).toEqual([]);
    // The check can fail: a command that reads stdin (here /dev/null, a file, so it reads no JSON and fails) opens it.
    const fromStdin = await builtinsOf(['mcp', 'add-json', 'from-stdin', '-']);
    expect(fromStdin.code).toBe(2);
    expect(stdinModules(fromStdin.names)).toContain('internal/fs/streams');
  });

  it('the bundle holds commander and none of the daemon\'s packages', () => {
    const modules = Object.values(bundled).flat();
    expect(modules).toContain('node_modules/commander/index.js');
    expect(modules.filter((source) => source.startsWith('node_modules/') && !source.startsWith('node_modules/commander/'))).toEqual([]);
  });

  it('--help and mcp list load none of them either', async () => {
    for (const args of [['--help'], ['mcp', 'list']]) {
      const run = await recordedRun(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(sourcesOf(run.loaded)).toContain('dist/cli/main.js');
      expect(forbidden(run.loaded), args.join(' ')).toEqual([]);
    }
  });

  it('mcp serve --help loads none of them; mcp serve itself loads the MCP SDK, from dist/gateway, outside the bundle', async () => {
    const help = await recordedRun(['mcp', 'serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--approve-in-client');
    expect(forbidden(help.loaded)).toEqual([]);
    expect(sourcesOf(help.loaded).filter((source) => source.startsWith('dist/gateway/'))).toEqual([]);
    // stdin is /dev/null: the MCP client is gone at once, and the gateway ends (exit 0).
    const serve = await recordedRun(['mcp', 'serve']);
    expect(serve.code).toBe(0);
    expect(sourcesOf(serve.loaded)).toContain('dist/gateway/index.js');
    expect(forbidden(serve.loaded).some((source) => source.startsWith('node_modules/@modelcontextprotocol/sdk/'))).toBe(true);
    expect(Object.values(bundled).flat().filter((source) => source.startsWith('dist/gateway/'))).toEqual([]);
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
