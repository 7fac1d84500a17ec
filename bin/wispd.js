#!/usr/bin/env node
// CommonJS, as every file of bin/ (bin/package.json, for wispctl's sake); the daemon is ESM.
// The heap flags first, before the daemon's modules grow the heap (src/daemon/heap-flags.ts).
import('../dist/daemon/heap-flags.js')
  .then(({ applyHeapFlags }) => {
    applyHeapFlags();
    return import('../dist/daemon/main.js');
  })
  .then(({ main }) => main(process.argv));
