// Writes the generated checks (scripts/validators.mjs) from the built schemas: part of
// `npm run build` (after tsc), the code into dist/generated/ only; with --declarations
// (`npm run validators`), also the committed declarations in generated/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { generatedFiles } from './validators.mjs';

const declarationsToo = process.argv.includes('--declarations');
const files = await generatedFiles((path) => import(`../dist/${path}`));
mkdirSync(new URL('../dist/generated/', import.meta.url), { recursive: true });
for (const [file, code] of Object.entries(files)) {
  if (!file.startsWith('dist/') && !declarationsToo) continue;
  writeFileSync(new URL(`../${file}`, import.meta.url), code);
  if (declarationsToo) console.log(`wrote ${file}`);
}
