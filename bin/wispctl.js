#!/usr/bin/env node
// CommonJS (bin/package.json), and wispctl as one bundle (scripts/bundle-cli.js): every
// command starts a process, and an ESM entry or dozens of module files cost each one more
// than all it then does.
require('../dist/wispctl/main.cjs').main(process.argv);
