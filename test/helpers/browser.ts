import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { daemonEnv, wispctlBin } from './wispd.js';
import { needs } from './skips.js';

/**
 * The browser tests run Debian's Chromium (apt-get install chromium) through playwright-core,
 * which never downloads one. WISP_CHROMIUM names another binary. Without one the tests skip
 * with a message, unless WISP_REQUIRE_CHROMIUM=1 (CI), where its absence is a failure.
 */
export function findChromium(): string | undefined {
  const candidates = [process.env.WISP_CHROMIUM ?? '', '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  const found = candidates.find((file) => file !== '' && existsSync(file));
  if (found === undefined && process.env.WISP_REQUIRE_CHROMIUM === '1') {
    throw new Error('WISP_REQUIRE_CHROMIUM=1 but no Chromium was found (apt-get install chromium, or set WISP_CHROMIUM)');
  }
  if (found === undefined) needs(false, 'no Chromium (apt-get install chromium, or set WISP_CHROMIUM): the web panel tests in a browser');
  return found;
}

/** A running `wispctl ui --no-open`: its URL (read from stdout), output, and exit. */
export interface PanelProcess {
  readonly child: ChildProcess;
  readonly url: URL;
  /** http://127.0.0.1:PORT, without the token. */
  readonly base: string;
  readonly port: number;
  stderr(): string;
  readonly exited: Promise<number | null>;
}

export async function startPanelProcess(socket: string, extraArgs: string[] = []): Promise<PanelProcess> {
  const child = spawn(process.execPath, [wispctlBin, '--socket', socket, 'ui', '--no-open', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'], env: daemonEnv() });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0] ?? '');
    });
    void exited.then((code) => reject(new Error(`wispctl ui exited ${String(code)}: ${stderr}`)));
  });
  const url = new URL(line);
  return { child, url, base: url.origin, port: Number(url.port), stderr: () => stderr, exited };
}

export interface PlainResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One HTTP request with exactly the headers given (fetch would not let a test set Host),
 * to the panel's 127.0.0.1 listener.
 */
export function plainRequest(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: { Host: `127.0.0.1:${port}`, ...options.headers }, setHost: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
