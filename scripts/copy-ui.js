// After tsc: the web panel's browser files (src/ui/static, plain ES modules, no build step)
// go to dist/ui/static as they are, with Preact + hooks + htm in one module (htm's
// standalone build) beside them, so the panel is served from the package and works offline.
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'dist', 'ui', 'static');
rmSync(target, { recursive: true, force: true });
cpSync(path.join(root, 'src', 'ui', 'static'), target, { recursive: true });
mkdirSync(path.join(target, 'vendor'), { recursive: true });
cpSync(path.join(root, 'node_modules', 'htm', 'preact', 'standalone.module.js'), path.join(target, 'vendor', 'preact-htm.js'));
