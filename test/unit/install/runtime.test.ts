import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRuntime } from '../../../src/install/index.js';
import { tempDir } from '../../helpers/wispd.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

/** A bin dir like a real install: node, and an npm shim pointing into an npm package of the given version. */
function runtimeDir(npmVersion: string): string {
  const root = tempDir();
  dirs.push(root);
  const pkg = path.join(root.path, 'lib', 'node_modules', 'npm');
  mkdirSync(path.join(pkg, 'bin'), { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'npm', version: npmVersion }));
  writeFileSync(path.join(pkg, 'bin', 'npm-cli.js'), '', { mode: 0o755 });
  const bin = path.join(root.path, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, path.join(bin, 'node'));
  symlinkSync(path.join(pkg, 'bin', 'npm-cli.js'), path.join(bin, 'npm'));
  return bin;
}

describe('runtime discovery', () => {
  it('finds node and npm 12+ in the listed directories, and runs npm as node <npm-cli.js>', async () => {
    const bin = runtimeDir('12.0.1');
    const runtime = await findRuntime([path.join(bin, 'missing'), bin]);
    expect(runtime).toMatchObject({ node: path.join(bin, 'node'), nodeVersion: process.version, npmVersion: '12.0.1' });
    expect(runtime.npmCli).toMatch(/lib\/node_modules\/npm\/bin\/npm-cli\.js$/);
  });

  it('refuses npm older than 12 with NPM_TOO_OLD, naming what it found', async () => {
    const bin = runtimeDir('11.19.1');
    await expect(findRuntime([bin])).rejects.toMatchObject({ code: 'NPM_TOO_OLD', message: expect.stringContaining('npm 11.19.1') });
  });

  it('says RUNTIME_NOT_FOUND when no directory has both', async () => {
    const empty = tempDir();
    dirs.push(empty);
    await expect(findRuntime([empty.path])).rejects.toMatchObject({ code: 'RUNTIME_NOT_FOUND', message: expect.stringContaining('install the server by hand') });
  });
});
