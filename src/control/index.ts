export { WispClient } from './client.js';
export { RpcServer, type AdmissionLoad, type CallContext, type MethodEntry, type MethodTraits, type RpcConnection, type RpcLogger } from './server.js';
export { EmittedEvent, EventHub, type HeldEvent, type Replay } from './event-hub.js';
export { resolvePaths, locatePaths, pointerFile, pointerText, readSocketPointer, POINTER_NAME, checkSocketPath, maxSocketPathBytes, SOCKET_NAME, type WispPaths, type PathInputs } from './paths.js';
