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
  /** Whether a key was saved in the keychain ('keychain'; null or an old 'session': none); the settings store. */
  readonly settings: { readonly keyStorage: KeyStorage; update(change: { keyStorage: KeyStorage }): Promise<void> };
  /** The daemon's own environment: only DEEPSEEK_API_KEY is read. */
  readonly env: NodeJS.ProcessEnv;
  /** The key is a secret: held by the redactor while in use, released when cleared. */
  readonly hold: (value: string) => void;
  readonly release: () => void;
}

/**
 * The model API key. Which one applies, first match wins:
 *   1. a key set for this daemon run only (`storage: 'session'`, memory; gone at restart),
 *   2. a key saved in the keychain (the settings record that one was saved),
 *   3. the daemon's own DEEPSEEK_API_KEY,
 *   4. none: MODEL_NO_KEY.
 * So a saved key beats the environment, and after a restart a session key is simply gone:
 * the keychain or the environment applies again, and `source` says which.
 */
export class ModelApiKey {
  private cached: string | undefined;
  /** Whether a session key was set in this run: never persisted, since the key itself is not. */
  private sessionKey = false;

  constructor(private readonly options: ModelApiKeyOptions) {}

  /** The key for a model request, or MODEL_NO_KEY saying how to set one. */
  async resolve(): Promise<string> {
    if (this.cached !== undefined) return this.cached;
    let key: string | undefined;
    if (this.sessionKey) key = (await this.options.session.get(MODEL_KEY.owner, MODEL_KEY.name))?.value;
    if (key === undefined && this.savedInKeychain()) key = (await this.options.keychain.get(MODEL_KEY.owner, MODEL_KEY.name))?.value;
    key ??= this.fromEnvironment();
    if (key === undefined) {
      throw new WispError('MODEL_NO_KEY', 'no model API key: set one with `wispctl model set-key` (or `--session` for this daemon run only), or start the daemon with DEEPSEEK_API_KEY');
    }
    this.options.hold(key);
    this.cached = key;
    return key;
  }

  /**
   * model.setKey: saves the key in the chosen store; an empty value deletes the key kept
   * there, and the next source in line applies (a keychain key, then the environment).
   */
  async set(storage: 'keychain' | 'session', value: string): Promise<void> {
    const store = this.store(storage);
    this.cached = undefined;
    this.options.release();
    if (value === '') {
      await store.delete(MODEL_KEY.owner, MODEL_KEY.name);
      if (storage === 'session') this.sessionKey = false;
      else await this.options.settings.update({ keyStorage: null });
      return;
    }
    await store.set(MODEL_KEY.owner, MODEL_KEY.name, { value, binding: MODEL_KEY.binding });
    if (storage === 'session') this.sessionKey = true;
    else if (this.options.settings.keyStorage !== 'keychain') await this.options.settings.update({ keyStorage: 'keychain' });
    // The key in use is a secret from now on (a keychain key under a session one is not in use).
    if (storage === 'session' || !this.sessionKey) {
      this.options.hold(value);
      this.cached = value;
    }
  }

  /** Where the key comes from now, as model.getSettings reports it (never the value). */
  get source(): 'keychain' | 'session' | 'environment' | 'none' {
    if (this.sessionKey) return 'session';
    if (this.savedInKeychain()) return 'keychain';
    return this.fromEnvironment() !== undefined ? 'environment' : 'none';
  }

  /** Settings written before session keys stopped being recorded may say 'session': that key died with its daemon. */
  private savedInKeychain(): boolean {
    return this.options.settings.keyStorage === 'keychain';
  }

  private fromEnvironment(): string | undefined {
    const value = this.options.env.DEEPSEEK_API_KEY;
    return value === undefined || value === '' ? undefined : value;
  }

  private store(storage: 'keychain' | 'session'): KeyStore {
    return storage === 'keychain' ? this.options.keychain : this.options.session;
  }
}
