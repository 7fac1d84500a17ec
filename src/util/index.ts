export { writeFileAtomic, fsyncDirectory, sweepTempFiles, sweepTempFilesIn } from './atomic-file.js';
export { LineSplitter } from './line-splitter.js';
export { sha256Hex, canonicalJson } from './digest.js';
export { openSafe, readSafe, writeSafe, appendSafe, checkDirectory, checkEntry, checkEntries, fileProblem, directoryProblem, unsafeFile, type OpenMode } from './safe-file.js';
export { packageVersion } from './version.js';
export { linkedSignal } from './linked-signal.js';
export { moveAside, jsonProblem, schemaProblem, type StorageProblem } from './persisted.js';
export { nestsDeeperThan, textNestsDeeperThan } from './json-depth.js';
export { processStartTime, pidExists, groupMembers, groupRunning, startedSince } from './process-identity.js';
