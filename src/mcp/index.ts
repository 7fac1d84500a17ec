export { ServiceStore, REGISTRY_FILE, SCHEMA_VERSION, type StoredService, type LoadProblem, type LoadResult } from './service-store.js';
export { ServiceRegistry, type RegisterInput, type UpdateInput } from './service-registry.js';
