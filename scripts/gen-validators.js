// npm run validators: writes the generated checks (scripts/validators.mjs) from the built schemas.
import { writeFileSync } from 'node:fs';
import { generatedFiles } from './validators.mjs';

const files = await generatedFiles((path) => import(`../dist/${path}`));
for (const [file, code] of Object.entries(files)) {
  writeFileSync(new URL(`../${file}`, import.meta.url), code);
  console.log(`wrote ${file}`);
}
