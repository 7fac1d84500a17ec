export { writeFileAtomic, fsyncDirectory, sweepTempFiles, sweepTempFilesIn } from './atomic-file.js';
export { LineSplitter } from './line-splitter.js';
export { sha256Hex, canonicalJson } from './digest.js';
export { assertNever } from './assert-never.js';
export { linkedSignal } from './linked-signal.js';
export { moveAside, jsonProblem, schemaProblem, type StorageProblem } from './persisted.js';
export { nestsDeeperThan, textNestsDeeperThan } from './json-depth.js';
export { processStartTime, pidExists, groupMembers, groupRunning, startedSince } from './process-identity.js';
