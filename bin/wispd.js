#!/usr/bin/env node
// CommonJS, as every file of bin/ (bin/package.json, for wispctl's sake); the daemon is ESM.
import('../dist/daemon/main.js').then(({ main }) => main(process.argv));
