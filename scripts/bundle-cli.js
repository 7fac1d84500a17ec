// Part of npm run build: bundles wispctl (dist/cli, as tsc built it, and commander) into
// dist/wispctl/, CommonJS, one file with what every command needs and one per command group,
// for bin/wispctl.js. wispctl is started for every command: at about a millisecond per module
// file loaded, its ~30 files were most of what `wispctl status` spent beyond a bare node
// client, and an ESM entry costs the ESM loader's start-up besides (a few milliseconds more).
// dist/wispctl/modules.json lists the modules in each file (test/integration/cli-startup.test.ts
// reads it). Anything but node: built-ins and commander fails the build: wispctl loads no
// package of the daemon's (layers.js CLI_FORBIDDEN_PACKAGES), and now none at all at run time.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('..', import.meta.url));
// Two levels below the root, as dist/cli/ is: the CLI finds package.json and bin/ relative to itself.
const outDir = path.join(root, 'dist', 'wispctl');
const BUNDLED_PACKAGES = ['commander'];

/**
 * commander requires node:child_process when it loads, for executable subcommands, which
 * wispctl has none of; loading it costs a command several milliseconds (more than our own
 * code does). Here it is required when first used. A commander whose line differs fails the build.
 */
const lazyChildProcess = {
  name: 'commander-lazy-child-process',
  transform(code, id) {
    if (!id.endsWith(path.join('node_modules', 'commander', 'lib', 'command.js'))) return null;
    const eager = "const childProcess = require('node:child_process');";
    if (!code.includes(eager)) throw new Error(`${id} no longer has the line ${eager}: look at scripts/bundle-cli.js`);
    return code.replace(eager, "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };");
  },
};

/**
 * `wispctl ui` loads the web panel's server (dist/ui/) as it is, not bundled: it runs for as
 * long as the panel is open, so its start-up does not matter, and the browser app it serves
 * sits next to it. From the bundle's files (dist/wispctl/) it is ../ui/index.js.
 */
const panelOutside = {
  name: 'web-panel-outside',
  resolveId(source, importer) {
    if (importer !== undefined && importer.endsWith(path.join('dist', 'cli', 'commands', 'ui.js')) && source === '../../ui/index.js') {
      return { id: '../ui/index.js', external: true };
    }
    // `wispctl mcp serve` loads the MCP gateway (dist/gateway/) the same way: it loads the MCP SDK, which the bundle never holds.
    if (importer !== undefined && importer.endsWith(path.join('dist', 'cli', 'commands', 'mcp-serve.js')) && source === '../../gateway/index.js') {
      return { id: '../gateway/index.js', external: true };
    }
    return null;
  },
};

rmSync(outDir, { recursive: true, force: true });
const result = await build({
  input: path.join(root, 'dist', 'cli', 'main.js'),
  platform: 'node',
  plugins: [lazyChildProcess, panelOutside],
  // What every command needs goes into the entry file itself.
  preserveEntrySignatures: 'allow-extension',
  external: (id) => {
    if (id.startsWith('node:')) return true;
    if (id.startsWith('.') || path.isAbsolute(id) || BUNDLED_PACKAGES.some((name) => id === name || id.startsWith(`${name}/`))) return false;
    throw new Error(`wispctl imports ${id}: only node: built-ins and ${BUNDLED_PACKAGES.join(', ')} may be bundled into it`);
  },
  output: { dir: outDir, format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: '[name]-[hash].cjs' },
  logLevel: 'warn',
});
const modules = Object.fromEntries(
  result.output.filter((item) => item.type === 'chunk').map((chunk) => [chunk.fileName, chunk.moduleIds.map((id) => path.relative(root, id))]),
);
writeFileSync(path.join(outDir, 'modules.json'), `${JSON.stringify(modules, null, 2)}\n`);
