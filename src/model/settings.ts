import { Type, type Static } from '@sinclair/typebox';
import { schemaCheck, type SettingsFile, type SettingsSection } from '../util/index.js';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from './deepseek.js';

/** The `model` section of settings.json: model settings, and where the key is kept (never the key itself). Persisted: additive changes only. */
const ModelSection = Type.Object(
  {
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
    deferToolsAbove: Type.Optional(Type.Integer({ minimum: 0, maximum: 128 })),
    keyStorage: Type.Optional(Type.Union([Type.Literal('keychain'), Type.Literal('session'), Type.Null()])),
  },
  { additionalProperties: false },
);
type ModelSection = Static<typeof ModelSection>;
export type KeyStorage = 'keychain' | 'session' | null;

/** The model settings, kept in the `model` section of settings.json (every file has one). */
export class ModelSettingsStore {
  private readonly section: SettingsSection<ModelSection>;

  constructor(file: SettingsFile) {
    this.section = file.section({ key: 'model', check: schemaCheck<ModelSection>(ModelSection, 'strict'), initial: {} });
  }

  get settings(): ModelSettings {
    const m = this.section.value ?? {};
    return {
      ...DEFAULT_MODEL_SETTINGS,
      ...(m.baseUrl !== undefined ? { baseUrl: m.baseUrl } : {}),
      ...(m.model !== undefined ? { model: m.model } : {}),
      ...(m.firstByteTimeoutMs !== undefined ? { firstByteTimeoutMs: m.firstByteTimeoutMs } : {}),
      ...(m.idleTimeoutMs !== undefined ? { idleTimeoutMs: m.idleTimeoutMs } : {}),
      ...(m.maxRetries !== undefined ? { maxRetries: m.maxRetries } : {}),
      ...(m.deferToolsAbove !== undefined ? { deferToolsAbove: m.deferToolsAbove } : {}),
    };
  }

  get keyStorage(): KeyStorage {
    return this.section.value?.keyStorage ?? null;
  }

  update(change: Partial<Omit<ModelSection, 'keyStorage'>> & { keyStorage?: KeyStorage }): Promise<void> {
    return this.section.update((current) => ({ ...current, ...change }));
  }
}
