import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';

/** Another user on the same machine: needs root (to switch to `nobody`) and setpriv. */
function canSwitchUser(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

describe.skipIf(!canSwitchUser())('access control', () => {
  it('keeps another user out of the socket and the data dir, even when the data dir was created open to everyone', async () => {
    // The temp dir itself is world-readable here: only the 0700 runtime dir stands in the way.
    chmodSync(home.path, 0o755);
    const daemon = await startWispd(home.path);
    const attempt = (socket: string): Promise<string> =>
      new Promise((resolve) => {
        const script = `require('net').createConnection(${JSON.stringify(socket)}).on('error', (e) => { console.log(e.code); process.exit(0) }).on('connect', () => { console.log('CONNECTED'); process.exit(0) })`;
        execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], (_error, stdout) => resolve(stdout.trim()));
      });
    expect(await attempt(daemon.socket)).toBe('EACCES');
    // Nor can it read the data dir: the registry, the audit log, the settings.
    const client0 = await daemon.connect();
    await client0.call('services.register', { name: 'private', command: '/bin/true' });
    await client0.close();
    const read = (file: string): Promise<string> =>
      new Promise((resolve) => {
        const script = `try { require('fs').readdirSync(${JSON.stringify(file)}); console.log('LISTED') } catch (e) { try { require('fs').readFileSync(${JSON.stringify(file)}); console.log('READ') } catch (f) { console.log(f.code) } }`;
        execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], (_error, stdout) => resolve(stdout.trim()));
      });
    expect(await read(home.path)).toBe('EACCES');
    expect(await read(path.join(home.path, 'mcp-servers.json'))).toBe('EACCES');
    expect(statSync(home.path).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(home.path, 'mcp-servers.json')).mode & 0o777).toBe(0o600);
    // The owner still gets in.
    const client = await daemon.connect();
    expect((await client.call('daemon.status')).pid).toBe(daemon.pid);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });
});
