// Writes docs/protocol.md and docs/errors.md from the built protocol definition, and
// docs/cli.md from the built CLI's own --help (scripts/cli-reference.mjs).
import { writeFileSync } from 'node:fs';
import { main } from '../dist/cli/main.js';
import { renderErrorsMarkdown, renderProtocolMarkdown } from '../dist/core/wire/index.js';
import { renderCliReference } from './cli-reference.mjs';

writeFileSync(new URL('../docs/protocol.md', import.meta.url), renderProtocolMarkdown());
writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsMarkdown());
writeFileSync(new URL('../docs/cli.md', import.meta.url), await renderCliReference(main));
console.log('wrote docs/protocol.md, docs/errors.md and docs/cli.md');
