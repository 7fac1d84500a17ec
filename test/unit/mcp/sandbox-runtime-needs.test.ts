import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeNeeds, tooBroad } from '../../../src/mcp/sandbox/runtime-needs.js';

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wisp-needs-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(p: string, text = '', mode = 0o644): string {
  const full = path.join(root, p);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  chmodSync(full, mode);
  return full;
}

const home = path.join(root, 'home');
const none = (): Promise<string | undefined> => Promise.resolve(undefined);

describe('what a command needs to run', () => {
  it('grants nothing more for a system interpreter and a script in the system', async () => {
    expect(await runtimeNeeds({ command: '/usr/bin/node', args: ['/usr/lib/x/index.js'], cwd: null, home, which: none })).toEqual({ needs: [], warnings: [] });
  });

  it('grants an interpreter\'s install prefix and the script\'s package root (its package.json)', async () => {
    const node = file('opt/node-v20/bin/node', '', 0o755);
    file('proj/package.json', '{}');
    const script = file('proj/dist/server.js');
    const { needs } = await runtimeNeeds({ command: node, args: ['--enable-source-maps', script, '/data/x'], cwd: null, home, which: none });
    expect(needs).toEqual([
      { path: path.join(root, 'opt/node-v20'), why: 'runtime' },
      { path: path.join(root, 'proj'), why: 'script' },
    ]);
  });

  it('grants an npm install\'s node_modules, where its dependencies are, not the install directory', async () => {
    const bin = file('installs/abc/node_modules/@scope/pkg/dist/index.js');
    file('installs/abc/node_modules/@scope/pkg/package.json', '{}');
    const { needs } = await runtimeNeeds({ command: '/usr/bin/node', args: [bin], cwd: null, home, which: none });
    expect(needs).toEqual([{ path: path.join(root, 'installs/abc/node_modules'), why: 'script' }]);
  });

  it('follows a #! script to its interpreter (through /usr/bin/env) and grants the script\'s package', async () => {
    const node = file('tools/node/bin/node', '', 0o755);
    file('tools/cli/package.json', '{}');
    const script = file('tools/cli/bin/cli.js', '#!/usr/bin/env node\nconsole.log(1)\n', 0o755);
    const link = path.join(root, 'tools/bin/cli');
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(script, link);
    const { needs } = await runtimeNeeds({ command: link, args: [], cwd: null, home, which: (name) => Promise.resolve(name === 'node' ? node : undefined) });
    expect(needs).toEqual(
      expect.arrayContaining([
        { path: path.join(root, 'tools/bin'), why: 'runtime' },
        { path: path.join(root, 'tools/cli/bin'), why: 'runtime' },
        { path: path.join(root, 'tools/node'), why: 'interpreter' },
        { path: path.join(root, 'tools/cli'), why: 'script' },
      ]),
    );
  });

  it('grants a virtualenv by the path its python was run as', async () => {
    const venv = path.join(root, 'proj2/.venv');
    file('proj2/.venv/pyvenv.cfg', 'home = /usr/bin\n');
    mkdirSync(path.join(venv, 'bin'), { recursive: true });
    symlinkSync('/usr/bin/python3', path.join(venv, 'bin/python'));
    const { needs } = await runtimeNeeds({ command: path.join(venv, 'bin/python'), args: ['-m', 'server'], cwd: null, home, which: none });
    expect(needs).toContainEqual({ path: venv, why: 'venv' });
  });

  it('never grants the home directory for a script lying loose in it: the script alone', async () => {
    const script = file('home/server.py');
    const { needs } = await runtimeNeeds({ command: '/usr/bin/python3', args: [script], cwd: null, home, which: none });
    expect(needs).toEqual([{ path: script, why: 'script' }]);
    expect(tooBroad(home, home)).toBe(true);
    expect(tooBroad(path.dirname(home), home)).toBe(true);
    expect(tooBroad('/opt', home)).toBe(true);
    expect(tooBroad(path.join(home, 'proj'), home)).toBe(false);
  });

  it('warns that npx cannot fetch at launch in the sandbox', async () => {
    const { warnings } = await runtimeNeeds({ command: '/usr/bin/npx', args: ['-y', 'x'], cwd: null, home, which: none });
    expect(warnings[0]).toMatch(/^npx downloads what it runs at launch/);
  });
});
