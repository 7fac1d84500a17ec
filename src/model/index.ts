export { streamTurn, DEFAULT_MODEL_SETTINGS, type ModelSettings, type TurnHandlers } from './deepseek.js';
export type { ChatMessage, ToolCallWire, ToolDefinition, Turn, Usage, FinishReason } from './wire.js';
export { ModelSettingsStore, type KeyStorage, type InstallSettingsView, type InstallSettingsChange } from './settings.js';
export { ModelApiKey, MODEL_KEY, type KeyStore, type ModelApiKeyOptions } from './api-key.js';
