import { WispError } from '../core/index.js';

/** One stored value and the digest of the command, args and cwd it was given for. */
export interface StoredSecret {
  readonly value: string;
  readonly binding: string;
}

/**
 * Where secret values live: one entry per service and variable. Implementations: the OS
 * keychain, a session-only memory store, and a counting fake for tests.
 */
export interface SecretStore {
  get(serviceId: string, name: string): Promise<StoredSecret | null>;
  set(serviceId: string, name: string, secret: StoredSecret): Promise<void>;
  delete(serviceId: string, name: string): Promise<void>;
}

/** Values kept only for this daemon run. */
export class MemorySecretStore implements SecretStore {
  protected readonly entries = new Map<string, StoredSecret>();

  get(serviceId: string, name: string): Promise<StoredSecret | null> {
    return Promise.resolve(this.entries.get(`${serviceId}/${name}`) ?? null);
  }

  set(serviceId: string, name: string, secret: StoredSecret): Promise<void> {
    this.entries.set(`${serviceId}/${name}`, secret);
    return Promise.resolve();
  }

  delete(serviceId: string, name: string): Promise<void> {
    this.entries.delete(`${serviceId}/${name}`);
    return Promise.resolve();
  }
}

/** For unit tests: a memory store that counts every call and can be made unavailable. */
export class FakeSecretStore extends MemorySecretStore {
  calls = 0;
  unavailable = false;
  /** When set, the set() call with this 1-based number fails (a keychain that refuses halfway). */
  failSetNumber: number | undefined;
  private sets = 0;

  override get(serviceId: string, name: string): Promise<StoredSecret | null> {
    this.touch();
    return super.get(serviceId, name);
  }

  override set(serviceId: string, name: string, secret: StoredSecret): Promise<void> {
    this.touch();
    this.sets += 1;
    if (this.sets === this.failSetNumber) throw keychainUnavailable('the fake keychain refused this write');
    return super.set(serviceId, name, secret);
  }

  override delete(serviceId: string, name: string): Promise<void> {
    this.touch();
    return super.delete(serviceId, name);
  }

  /** Every entry, for tests that look for a value where it must not be. */
  dump(): string {
    return JSON.stringify([...this.entries]);
  }

  private touch(): void {
    this.calls += 1;
    if (this.unavailable) throw keychainUnavailable('the fake keychain is switched off');
  }
}

export function keychainUnavailable(reason: string): WispError {
  return new WispError(
    'KEYCHAIN_UNAVAILABLE',
    // Which command keeps a value for this run only depends on who asked: wispctl adds its own.
    `the OS keychain is unavailable (${reason}). Unlock or start it, or keep the value for this daemon run only (session storage). Nothing was written in plain text.`,
    { reason },
  );
}
