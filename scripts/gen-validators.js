// npm run validators: writes the generated checks (scripts/validators.mjs) from the built schemas.
import { writeFileSync } from 'node:fs';
import { methods } from '../dist/core/wire/index.js';
import { RegistryDocument } from '../dist/mcp/service-store.js';
import { generatedFiles } from './validators.mjs';

for (const [file, code] of Object.entries(generatedFiles({ methods, registryDocument: RegistryDocument }))) {
  writeFileSync(new URL(`../${file}`, import.meta.url), code);
  console.log(`wrote ${file}`);
}
