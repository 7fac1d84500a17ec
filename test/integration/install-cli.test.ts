import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * `wispctl install` as a newcomer meets it (issue 18, bug 7): the help, a bad spec, an npm
 * too old, and a registry behind a TLS-intercepting proxy (a registry whose certificate is
 * signed by a CA of its own, fixtures/tls: npm says SELF_SIGNED_CERT_IN_CHAIN).
 */
const home = tempDir();
const tls = path.join(repoRoot, 'fixtures', 'tls');
let npm12Bin: string;
let daemon: RunningDaemon;
let client: WispClient;
let proxy: https.Server;
let proxyUrl: string;

const ctl = (...args: string[]) => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  npm12Bin = await ensureNpm12();
  // The leaf and its CA, as a proxy presents them; every request that gets through TLS is a 404.
  proxy = https.createServer(
    { key: readFileSync(path.join(tls, 'server.key')), cert: readFileSync(path.join(tls, 'server.pem')).toString() + readFileSync(path.join(tls, 'ca.pem')).toString() },
    (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}'),
  );
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
  daemon = await startWispd(path.join(home.path, 'data'));
  client = await daemon.connect();
}, NPM12_SETUP_MS + 60_000);

afterAll(async () => {
  await client.close();
  killLeftovers();
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  home.remove();
});

describe('wispctl install', () => {
  it('shows how to install first in its help, with an example', async () => {
    const help = await ctl('install', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: wispctl install \[run\] <package@version> --bin <name>/);
    expect(help.stdout).toMatch(/Commands:\n\s+run \[options\] <spec> \[args\.\.\.\]\s+install PKG@VERSION/);
    expect(help.stdout).toMatch(/Examples:\n\s+wispctl install run @modelcontextprotocol\/server-everything@\S+ --bin mcp-server-everything\n/);
    expect(help.stdout).toContain('--runtime-dir');
    expect(help.stdout).toContain('--ca-file');
  });

  it('refuses a bad spec with INVALID_PLAN even when npm is too old, and says what to do about an old npm', async () => {
    // This machine's own npm is 11 (as in installs.test.ts).
    await client.call('installs.setSettings', { runtimeDirs: ['/usr/bin'] });
    const noPackage = await ctl('install', '@latest', '--bin', 'x');
    expect(noPackage).toMatchObject({ code: 2, stdout: '' });
    expect(noPackage.stderr).toBe('wispctl: "@latest" names no package: give package@exact-version, like hello-mcp@1.2.3 (INVALID_PLAN)\n');
    const relative = await ctl('install', 'run', '../foo@1.0.0', '--bin', 'x');
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('"../foo" is not a full npm package name');
    expect(relative.stderr).toContain('(INVALID_PLAN)');
    const tag = await ctl('install', 'foo@latest', '--bin', 'x');
    expect(tag.code).toBe(2);
    expect(tag.stderr).toContain('"latest" is not an exact version');

    const old = await ctl('install', 'foo@1.0.0', '--bin', 'x');
    expect(old.code).toBe(7);
    expect(old.stderr).toMatch(/\/usr\/bin\/npm is npm 11\.\S+\. npm 12 needs Node 22\.22\.2\+ .*wispctl install settings --runtime-dir DIR.*\(NPM_TOO_OLD\)\n$/);
    expect(old.stderr).not.toContain('Update npm');
  });

  it('names --ca-file when npm cannot verify the registry\'s certificate, and not once the CA is given', async () => {
    await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: proxyUrl, caFile: null, timeoutMs: 60_000 });
    const untrusted = await ctl('install', 'hello-mcp@1.0.0', '--bin', 'hello-mcp', '--yes');
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain('SELF_SIGNED_CERT_IN_CHAIN');
    expect(untrusted.stderr).toContain('no CA bundle is set. Behind a TLS-intercepting proxy, give npm the proxy\'s CA: wispctl install settings --ca-file FILE.');
    expect(untrusted.stderr).toMatch(/\(INSTALL_FAILED\)\n$/);

    // With the proxy's CA (read inside npm's sandbox), the chain holds (another plan: a failed one is never replayed).
    // Sandboxed, npm reaches the registry through a proxy, and npm's proxy agent (https-proxy-agent) checks the
    // certificate of a registry named by IP address against "localhost": that is as far as it gets here.
    await client.call('installs.setSettings', { caFile: path.join(tls, 'ca.pem') });
    const chained = await ctl('install', 'hello-mcp@1.0.1', '--bin', 'hello-mcp', '--yes');
    expect(chained.code).toBe(1);
    expect(chained.stderr).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(chained.stderr).not.toContain('SELF_SIGNED_CERT_IN_CHAIN');
    expect(chained.stderr).not.toContain('--ca-file');
    // Unsandboxed (no proxy), TLS holds end to end and npm gets as far as the registry's 404.
    await client.call('installs.setSettings', { sandbox: false });
    const trusted = await ctl('install', 'hello-mcp@1.0.2', '--bin', 'hello-mcp', '--yes');
    expect(trusted.code).toBe(1);
    expect(trusted.stderr).toContain('E404');
    expect(trusted.stderr).not.toContain('--ca-file');
  }, 90_000);
});
