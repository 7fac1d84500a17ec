import type { SettingsFile, SettingsSection } from '../util/index.js';
import type { ModelSection } from './settings-schema.js';
import { checks } from '#generated/model-settings-check.js';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from './deepseek.js';

export type KeyStorage = 'keychain' | 'session' | null;

/** The model settings, kept in the `model` section of settings.json (every file has one). */
export class ModelSettingsStore {
  private readonly section: SettingsSection<ModelSection>;

  constructor(file: SettingsFile) {
    this.section = file.section({ key: 'model', check: checks.modelSection, initial: {} });
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
