import { chmodSync, chownSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locatePaths, pointerFile, pointerText, readSocketPointer } from '../../../src/control/index.js';
import { tempDir } from '../../helpers/wispd.js';
import { needs } from '../../helpers/skips.js';

/**
 * The socket pointer (control/socket-pointer.ts): how a client started without
 * XDG_RUNTIME_DIR finds the daemon, and every way a planted or stale pointer is refused.
 * Real directories, real files and a real listening socket.
 */
let root: { path: string; remove: () => void };
let home: string;
let dataDir: string;
let runDir: string;
let socket: string;
let server: net.Server;
const isRoot = needs(process.getuid?.() === 0, 'not root: the tests of files another user made (they chown)');

/** What a client with only HOME (and PATH) resolves: no XDG_RUNTIME_DIR. */
const locate = (extra: Parameters<typeof locatePaths>[0] = {}) => locatePaths({ platform: 'linux', homedir: home, env: {}, ...extra });
const point = (text: string): void => writeFileSync(pointerFile(dataDir), text, { mode: 0o600 });

beforeEach(async () => {
  root = tempDir('wisp-ptr-');
  home = path.join(root.path, 'home');
  dataDir = path.join(home, '.local', 'share', 'wisp');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  runDir = path.join(root.path, 'xdg', 'wisp');
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  socket = path.join(runDir, 'wispd.sock');
  server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  point(pointerText(socket, 4242));
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  root.remove();
});

const unsafe = (problem: RegExp): unknown => expect.objectContaining({ code: 'UNSAFE_FILE', message: expect.stringMatching(problem) as unknown });

describe('locatePaths', () => {
  it('with nothing at the resolved socket, follows a good pointer to the daemon in another runtime dir', () => {
    expect(resolvedSocket()).toBe(path.join(dataDir, 'run', 'wispd.sock'));
    expect(locate()).toMatchObject({ dataDir, socket, runtimeDir: runDir });
  });

  it('with --data-dir set to the default data dir, follows it the same way', () => {
    expect(locate({ dataDir }).socket).toBe(socket);
  });

  it('a socket at the resolved path wins, and the pointer is not even read', async () => {
    const own = path.join(dataDir, 'run');
    mkdirSync(own, { mode: 0o700 });
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen(path.join(own, 'wispd.sock'), resolve));
    try {
      point('not json');
      expect(locate().socket).toBe(path.join(own, 'wispd.sock'));
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('a socket named by --socket, WISP_SOCKET, --runtime-dir or WISP_RUNTIME_DIR is used as given', () => {
    expect(locate({ socket: '/x/s.sock' }).socket).toBe('/x/s.sock');
    expect(locate({ env: { WISP_SOCKET: '/x/s.sock' } }).socket).toBe('/x/s.sock');
    expect(locate({ runtimeDir: '/x' }).socket).toBe('/x/wispd.sock');
    expect(locate({ env: { WISP_RUNTIME_DIR: '/x' } }).socket).toBe('/x/wispd.sock');
  });

  it('no pointer, or one whose socket is gone (a killed daemon): the resolved path, to say no daemon answers there', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(locate().socket).toBe(resolvedSocket());
    rmSync(pointerFile(dataDir));
    expect(locate().socket).toBe(resolvedSocket());
    rmSync(home, { recursive: true });
    expect(locate().socket).toBe(resolvedSocket());
  });

  it('refuses a symlinked pointer (even to a good one)', () => {
    const elsewhere = path.join(root.path, 'planted.json');
    writeFileSync(elsewhere, pointerText(socket, 1), { mode: 0o600 });
    symlinkOver(pointerFile(dataDir), elsewhere);
    expect(() => locate()).toThrow(unsafe(/wispd-socket\.json: it is a symlink; refusing to use it/));
  });

  it('refuses a pointer writable by group or others', () => {
    chmodSync(pointerFile(dataDir), 0o620);
    expect(() => locate()).toThrow(unsafe(/writable by group or others \(mode 0620\)/));
    chmodSync(pointerFile(dataDir), 0o602);
    expect(() => locate()).toThrow(unsafe(/writable by group or others \(mode 0602\)/));
  });

  it('refuses a pointer with a second hard link', () => {
    linkSync(pointerFile(dataDir), path.join(root.path, 'other-name'));
    expect(() => locate()).toThrow(unsafe(/2 hard links/));
  });

  it('refuses a pointer that is not a regular file', () => {
    rmSync(pointerFile(dataDir));
    mkdirSync(pointerFile(dataDir), { mode: 0o700 });
    expect(() => locate()).toThrow(unsafe(/not a regular file/));
  });

  it('refuses a pointer that names a regular file, a symlink to the socket, or a relative or odd path', () => {
    const file = path.join(runDir, 'plain');
    writeFileSync(file, '');
    point(pointerText(file, 1));
    expect(() => locate()).toThrow(unsafe(/what it names, .*plain, is not a socket/));
    const link = path.join(runDir, 'link.sock');
    symlinkSync(socket, link);
    point(pointerText(link, 1));
    expect(() => locate()).toThrow(unsafe(/link\.sock, is a symlink/));
    for (const text of ['{"socket": "run/wispd.sock"}', '{"socket": "/a/../b.sock"}', '{"socket": 7}', '[]', 'garbage', `{"socket": "/${'a'.repeat(120)}"}`]) {
      point(text);
      expect(() => locate(), text).toThrow(unsafe(/does not name a socket|over the 107-byte limit/));
    }
  });

  it('refuses a pointer that names a socket in a directory that is not 0700', () => {
    chmodSync(runDir, 0o755);
    expect(() => locate()).toThrow(unsafe(/the directory of the socket it names, .*, has mode 0755, not 0700/));
    chmodSync(runDir, 0o700);
    expect(locate().socket).toBe(socket);
  });

  it('refuses to read a pointer in a data dir others can enter or that is a symlink', () => {
    chmodSync(dataDir, 0o755);
    expect(() => locate()).toThrow(unsafe(/wisp: it is open to group or others \(mode 0755\)/));
    chmodSync(dataDir, 0o700);
    const real = path.join(root.path, 'real-data');
    mkdirSync(real, { mode: 0o700 });
    writeFileSync(pointerFile(real), pointerText(socket, 1), { mode: 0o600 });
    symlinkOver(dataDir, real);
    expect(() => locate()).toThrow(unsafe(/wisp: it is a symlink/));
  });

  it('refuses everything that is not this user\'s (as another uid sees the same files)', () => {
    expect(() => readSocketPointer(dataDir, { uid: 4242, maxSocketBytes: 107 })).toThrow(unsafe(/belongs to uid \d+, not to this user \(uid 4242\)/));
  });

  it.runIf(isRoot)('refuses a pointer, a socket or a socket directory owned by another uid (chown, as root)', () => {
    chownSync(pointerFile(dataDir), 4242, 4242);
    expect(() => locate()).toThrow(unsafe(/wispd-socket\.json: it belongs to uid 4242/));
    chownSync(pointerFile(dataDir), 0, 0);
    chownSync(socket, 4242, 4242);
    expect(() => locate()).toThrow(unsafe(/wispd\.sock, belongs to uid 4242/));
    chownSync(socket, 0, 0);
    chownSync(runDir, 4242, 4242);
    expect(() => locate()).toThrow(unsafe(/the directory of the socket it names, .*, belongs to uid 4242/));
    chownSync(runDir, 0, 0);
    expect(locate().socket).toBe(socket);
  });
});

function resolvedSocket(): string {
  return path.join(dataDir, 'run', 'wispd.sock');
}

/** Replaces `target` (a file or a directory) by a symlink to `to`. */
function symlinkOver(target: string, to: string): void {
  renameSync(target, `${target}.old`);
  symlinkSync(to, target);
}
