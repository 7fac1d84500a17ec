export * from './protocol.js';
export { WispClient } from './client.js';
export { RpcServer, type CallContext, type MethodEntry, type RpcConnection, type RpcLogger } from './server.js';
export { EventHub, type Replay } from './event-hub.js';
export { resolvePaths, checkSocketPath, maxSocketPathBytes, SOCKET_NAME, type WispPaths, type PathInputs } from './paths.js';
export { packageVersion } from './version.js';
export { openSafe, readSafe, writeSafe, appendSafe, checkDirectory, checkEntry, checkEntries, fileProblem, directoryProblem, unsafeFile, type OpenMode } from './safe-file.js';
export { renderProtocolMarkdown, renderErrorsMarkdown } from './docs.js';
