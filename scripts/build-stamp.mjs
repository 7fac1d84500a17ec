// Build once per run: `npm ci` builds (prepare), and `npm test` rebuilt the same thing. The
// build writes dist/.build-stamp, a digest of every input it reads; `--check` exits 0 when
// dist/ was built from exactly these inputs (then npm test skips the build), 1 otherwise.
// A digest of contents, not mtimes: a fresh clone or a checkout touches every file.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stampFile = path.join(root, 'dist', '.build-stamp');
/** What `npm run build` reads: the sources, its scripts and configs, and the locked dependencies it bundles. */
const INPUTS = ['src', 'generated', 'scripts/gen-validators.js', 'scripts/validators.mjs', 'scripts/bundle-cli.js', 'scripts/bundle-ui.js', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

function files(entry) {
  const full = path.join(root, entry);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((d) => (d.isDirectory() ? files(path.join(entry, d.name)) : d.isFile() ? [path.join(entry, d.name)] : []));
}

export function inputsDigest() {
  const hash = createHash('sha256');
  hash.update(`node ${process.version}\n`);
  for (const file of INPUTS.flatMap(files)) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(path.join(root, file)));
    hash.update('\n');
  }
  return hash.digest('hex');
}

const mode = process.argv[2];
if (mode === '--write') {
  writeFileSync(stampFile, `${inputsDigest()}\n`);
} else if (mode === '--check') {
  const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  const fresh = built === inputsDigest();
  console.error(fresh ? 'build: dist/ is current (built from these sources): not rebuilt' : 'build: dist/ is missing or older than the sources: building');
  process.exit(fresh ? 0 : 1);
} else {
  console.error('usage: node scripts/build-stamp.mjs --write|--check');
  process.exit(2);
}
