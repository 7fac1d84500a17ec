// Writes docs/protocol.md and docs/errors.md from the built protocol definition.
import { writeFileSync } from 'node:fs';
import { renderErrorsMarkdown, renderProtocolMarkdown } from '../dist/core/wire/index.js';

writeFileSync(new URL('../docs/protocol.md', import.meta.url), renderProtocolMarkdown());
writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsMarkdown());
console.log('wrote docs/protocol.md and docs/errors.md');
