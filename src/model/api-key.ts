import { WispError } from '../core/index.js';
import type { KeyStorage } from './settings.js';

/** Where the model API key is filed in the keychain (or the session store). */
export const MODEL_KEY = { owner: 'model', name: 'DEEPSEEK_API_KEY', binding: 'model' } as const;

/** A secret store as the key needs it: the keychain or the session-only store. */
export interface KeyStore {
  get(owner: string, name: string): Promise<{ readonly value: string } | null>;
  set(owner: string, name: string, secret: { readonly value: string; readonly binding: string }): Promise<void>;
  delete(owner: string, name: string): Promise<void>;
}

export interface ModelApiKeyOptions {
  readonly keychain: KeyStore;
  readonly session: KeyStore;
  /** Which store the user chose (null: none, the daemon's DEEPSEEK_API_KEY applies); the settings store. */
  readonly settings: { readonly keyStorage: KeyStorage; update(change: { keyStorage: KeyStorage }): Promise<void> };
  /** The daemon's own environment: only DEEPSEEK_API_KEY is read. */
  readonly env: NodeJS.ProcessEnv;
  /** The key is a secret: held by the redactor while in use, released when cleared. */
  readonly hold: (value: string) => void;
  readonly release: () => void;
}

/** The model API key: saved (keychain or session) if the user set one, else the daemon's DEEPSEEK_API_KEY. */
export class ModelApiKey {
  private cached: string | undefined;

  constructor(private readonly options: ModelApiKeyOptions) {}

  /** The key for a model request, or MODEL_NO_KEY saying how to set one. */
  async resolve(): Promise<string> {
    if (this.cached !== undefined) return this.cached;
    const storage = this.options.settings.keyStorage;
    let key: string | undefined;
    if (storage !== null) {
      key = (await this.store(storage).get(MODEL_KEY.owner, MODEL_KEY.name))?.value;
    } else {
      key = this.fromEnvironment();
    }
    if (key === undefined) {
      throw new WispError(
        'MODEL_NO_KEY',
        storage === 'session'
          ? 'the model API key was kept for the last daemon run only: set it again (wispctl model set-key)'
          : 'no model API key: set one with `wispctl model set-key`, or start the daemon with DEEPSEEK_API_KEY',
      );
    }
    this.options.hold(key);
    this.cached = key;
    return key;
  }

  /** model.setKey: saves the key in the chosen store; an empty value deletes it (the environment applies again). */
  async set(storage: 'keychain' | 'session', value: string): Promise<void> {
    const store = this.store(storage);
    if (value === '') {
      await store.delete(MODEL_KEY.owner, MODEL_KEY.name);
      await this.options.settings.update({ keyStorage: null });
      this.cached = undefined;
      this.options.release();
    } else {
      await store.set(MODEL_KEY.owner, MODEL_KEY.name, { value, binding: MODEL_KEY.binding });
      this.options.hold(value);
      await this.options.settings.update({ keyStorage: storage });
      this.cached = value;
    }
  }

  /** Where the key comes from, as model.getSettings reports it (never the value). */
  get source(): 'keychain' | 'session' | 'environment' | 'none' {
    return this.options.settings.keyStorage ?? (this.fromEnvironment() !== undefined ? 'environment' : 'none');
  }

  private fromEnvironment(): string | undefined {
    const value = this.options.env.DEEPSEEK_API_KEY;
    return value === undefined || value === '' ? undefined : value;
  }

  private store(storage: 'keychain' | 'session'): KeyStore {
    return storage === 'keychain' ? this.options.keychain : this.options.session;
  }
}
