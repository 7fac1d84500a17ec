import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killLeftovers, runWispdExpectingExit, startWispd, tempDir } from '../helpers/wispd.js';
import { needs } from '../helpers/skips.js';

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

/** Runs a node script as `nobody`; resolves with what it printed. */
function asNobody(script: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], (_error, stdout) => resolve(stdout.trim()));
  });
}

describe.skipIf(!needs(canSwitchUser(), 'not root, or no setpriv: the access-control tests, which run a client as another user'))('access control', () => {
  it('keeps another user out of the socket and the data dir it creates', async () => {
    // The temp dir itself is world-readable here: only the 0700 dirs the daemon makes stand in the way.
    chmodSync(home.path, 0o755);
    const dataDir = path.join(home.path, 'data');
    const daemon = await startWispd(dataDir);
    const attempt = (socket: string): Promise<string> =>
      asNobody(`require('net').createConnection(${JSON.stringify(socket)}).on('error', (e) => { console.log(e.code); process.exit(0) }).on('connect', () => { console.log('CONNECTED'); process.exit(0) })`);
    expect(await attempt(daemon.socket)).toBe('EACCES');
    // Nor can it read the data dir: the registry, the audit log, the settings.
    const client0 = await daemon.connect();
    await client0.call('services.register', { name: 'private', command: '/bin/true' });
    await client0.close();
    const read = (file: string): Promise<string> =>
      asNobody(`try { require('fs').readdirSync(${JSON.stringify(file)}); console.log('LISTED') } catch (e) { try { require('fs').readFileSync(${JSON.stringify(file)}); console.log('READ') } catch (f) { console.log(f.code) } }`);
    expect(await read(dataDir)).toBe('EACCES');
    expect(await read(path.join(dataDir, 'mcp-servers.json'))).toBe('EACCES');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, 'mcp-servers.json')).mode & 0o777).toBe(0o600);
    // The owner still gets in.
    const client = await daemon.connect();
    expect((await client.call('daemon.status')).pid).toBe(daemon.pid);
    await client.call('daemon.shutdown');
    await daemon.exited;
  });

  it('refuses a data dir that existed open to everyone, where another user planted settings.json and an audit.jsonl symlink', async () => {
    chmodSync(home.path, 0o755);
    const dataDir = path.join(home.path, 'open');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o777);
    const victim = path.join(home.path, 'victim.txt');
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    // The other user plants a model baseUrl of their own and points the audit log at a file of the victim's.
    expect(
      await asNobody(
        `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(path.join(dataDir, 'settings.json'))}, '{"schemaVersion":1,"model":{"baseUrl":"http://127.0.0.1:9/steal"}}'); fs.symlinkSync(${JSON.stringify(victim)}, ${JSON.stringify(path.join(dataDir, 'audit.jsonl'))}); console.log('PLANTED')`,
      ),
    ).toBe('PLANTED');
    const result = await runWispdExpectingExit(dataDir);
    expect(result.code).toBe(7);
    expect(result.output).toContain(`unsafe ${dataDir}: it is open to group or others (mode 0777)`);
    // Its mode is not changed behind the user's back, nothing is written into it, the victim's file is untouched.
    expect(statSync(dataDir).mode & 0o777).toBe(0o777);
    expect(readdirSync(dataDir).sort()).toEqual(['audit.jsonl', 'settings.json']);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');

    // Made private by its owner, the other user's file is still refused, by name.
    chmodSync(dataDir, 0o700);
    rmSync(path.join(dataDir, 'audit.jsonl'));
    const again = await runWispdExpectingExit(dataDir);
    expect(again.code).toBe(7);
    expect(again.output).toContain(`unsafe ${path.join(dataDir, 'settings.json')}: it belongs to uid 65534, not to this user (uid 0)`);
  });
});
