export { writeFileAtomic, fsyncDirectory, sweepTempFiles, sweepTempFilesIn } from './atomic-file.js';
export { LineSplitter, type FrameBudget, type OverflowReason } from './line-splitter.js';
export { sha256Hex, canonicalJson } from './digest.js';
export { openSafe, readSafe, writeSafe, appendSafe, checkDirectory, checkEntry, checkEntries, fileProblem, directoryProblem, unsafeFile, type OpenMode } from './safe-file.js';
export { packageVersion } from './version.js';
export { linkedSignal, withOwnSignal } from './linked-signal.js';
export { moveAside, jsonProblem, schemaProblem, type StorageProblem } from './persisted.js';
// Pure, so in core (the MCP gateway measures its client's frames with it too); here for the areas that had it from util.
export { NestingMeter, nestsDeeperThan, textNestsDeeperThan } from '../core/index.js';
export { processStartTime, pidExists, groupMembers, groupRunning, namespaceRunning, pidNamespaceOf, startedSince } from './process-identity.js';
export { BwrapInfo, killPid } from './sandbox-init.js';
export { SettingsFile, type SectionCheck, type SectionDefinition, type SettingsSection } from './settings-file.js';
export type { Check } from './first-use.js';
export { compileSchema, schemaCheck, type CompileMode } from './schema-compiler.js';
export { isoTime } from './iso-time.js';
export { parseJsonc, stripJsonComments } from '../core/index.js';
export { LightSignal, type CallSignal } from './light-signal.js';
