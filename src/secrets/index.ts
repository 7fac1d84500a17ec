export { Redactor, MIN_SECRET_CHARS } from './redactor.js';
export { Secrets, launchBinding, secretHolder, type Storage, type VariableRef, type VariableValue } from './secrets.js';
export { MemorySecretStore, FakeSecretStore, keychainUnavailable, type SecretStore, type StoredSecret } from './secret-store.js';
export { KeychainSecretStore, KEYCHAIN_SERVICE } from './keychain-store.js';
export { ServiceSecrets, type SecretEdit, type SecretKind } from './service-secrets.js';
