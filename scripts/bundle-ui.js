// Part of npm run build, after tsc: the web panel's browser app into dist/ui/static/, where
// `wispctl ui` serves it from memory (src/ui/static-files.ts), so the package works offline.
// Its modules (src/ui/static/*.js, plain ES modules) and what they import of core (its door,
// src/core/index.ts, pure: the escaping of src/core/visible-text.ts that wispctl uses too)
// and htm (the template parser, for html.js) become one ES module, app.js, with the same
// rolldown as scripts/bundle-cli.js; Preact with hooks (htm's standalone build) stays a file of
// its own beside it, vendor/preact-htm.js, as it comes from the package; index.html,
// style.css and favicon.svg are copied. dist/ui/panel-modules.json lists the bundled modules
// (test/unit/ui/client.test.ts reads it). Anything else the browser code imports (a node:
// module, another package, another area of src/) fails the build (layers.js BROWSER_APP).
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { BROWSER_APP } from '../layers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = path.join(root, 'src', 'ui', 'static');
const target = path.join(root, 'dist', 'ui', 'static');
const VENDOR = './vendor/preact-htm.js';

/** Only the app's own files, core (through its door) and the packages named may be bundled. */
const allowed = {
  name: 'browser-app-imports',
  resolveId(spec, importer) {
    if (spec === VENDOR && importer !== undefined && path.dirname(importer) === source) return { id: VENDOR, external: true };
    return null;
  },
  load(id) {
    const rel = path.relative(root, id).split(path.sep).join('/');
    const own = rel.startsWith('src/ui/static/') && !rel.slice('src/ui/static/'.length).includes('/');
    const core = rel.startsWith('src/core/') && !rel.startsWith('src/core/wire/');
    const pkg = BROWSER_APP.packages.some((name) => rel.startsWith(`node_modules/${name}/`));
    if (!own && !core && !pkg) throw new Error(`the panel's browser app imports ${rel}: only its own files, src/core (no schema) and ${BROWSER_APP.packages.join(', ')} may be bundled (layers.js BROWSER_APP)`);
    return null;
  },
};

rmSync(target, { recursive: true, force: true });
mkdirSync(path.join(target, 'vendor'), { recursive: true });
for (const file of readdirSync(source)) if (!file.endsWith('.js')) cpSync(path.join(source, file), path.join(target, file));
cpSync(path.join(root, 'node_modules', 'htm', 'preact', 'standalone.module.js'), path.join(target, VENDOR));
const result = await build({
  input: path.join(source, 'app.js'),
  platform: 'browser',
  plugins: [allowed],
  // The app's imports of core name its compiled file (../../core/index.js), as Node's do: here it is the TypeScript source.
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
  external: (id) => {
    if (id.startsWith('node:')) throw new Error(`the panel's browser app imports ${id}: it runs in a browser`);
    return id === VENDOR;
  },
  // core is pure (no I/O, nothing done at load time that matters: layers.js): a core module none of whose exports the app uses is left out whole.
  treeshake: { moduleSideEffects: (id) => !path.relative(root, id).startsWith(`src${path.sep}core${path.sep}`) },
  output: { file: path.join(target, 'app.js'), format: 'esm' },
  logLevel: 'warn',
});
const modules = result.output.filter((item) => item.type === 'chunk').flatMap((chunk) => chunk.moduleIds.map((id) => path.relative(root, id).split(path.sep).join('/')));
writeFileSync(path.join(root, 'dist', 'ui', 'panel-modules.json'), `${JSON.stringify(modules, null, 2)}\n`);
