export { streamTurn, DEFAULT_MODEL_SETTINGS, type ModelSettings, type TurnHandlers } from './deepseek.js';
export type { ChatMessage, ModelMessage, ToolCallWire, ToolDefinition, Turn, Usage, FinishReason } from './wire.js';
export { ModelSettingsStore, type KeyStorage } from './settings.js';
export { ModelApiKey, MODEL_KEY, type KeyStore, type ModelApiKeyOptions } from './api-key.js';
