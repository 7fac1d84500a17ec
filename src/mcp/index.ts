export { ServiceStore, REGISTRY_FILE, SCHEMA_VERSION, type StoredService, type InstallOrigin, type LoadProblem, type LoadResult } from './service-store.js';
export { ServiceRegistry, type RegisterInput, type UpdateInput, type RegistryChange } from './service-registry.js';
export { Supervisor, STDERR_TAIL_CHARS, type SupervisorOptions } from './supervisor.js';
export { modelToolName, type CatalogTool } from './tool-catalog.js';
export { transition, InvalidTransition, type ConnectionEvent } from './connection-state.js';
export type { StopLadder } from './stdio-transport.js';
export { ToolCalls, type CallRequest } from './tool-calls.js';
export { normalizeResult } from './result.js';
