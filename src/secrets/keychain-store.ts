import { createRequire } from 'node:module';
import type * as Keyring from '@napi-rs/keyring';
import { keychainUnavailable, type SecretStore, type StoredSecret } from './secret-store.js';

let loaded: typeof Keyring | undefined;

/**
 * The native keyring module, loaded on the first keychain access (synchronously: it is
 * CommonJS), not at start: a daemon that reads no secret never needs it. Called inside
 * run(), so a module that cannot be loaded is KEYCHAIN_UNAVAILABLE like any other failure.
 */
function keyring(): typeof Keyring {
  return (loaded ??= createRequire(import.meta.url)('@napi-rs/keyring') as typeof Keyring);
}

/** The keychain "service" every entry is filed under; the account is `<service id>/<VAR>`. */
export const KEYCHAIN_SERVICE = 'wisp-host';

/**
 * The OS keychain (macOS Keychain, Linux Secret Service) through @napi-rs/keyring. On
 * Linux the Secret Service store is required: the library's default silently falls back to
 * the kernel keyring, which does not survive a reboot. Any failure is KEYCHAIN_UNAVAILABLE;
 * there is never a plaintext fallback.
 */
export class KeychainSecretStore implements SecretStore {
  async get(serviceId: string, name: string): Promise<StoredSecret | null> {
    const text = await this.run(() => this.entry(serviceId, name).getPassword());
    if (text === null) return null;
    try {
      const parsed = JSON.parse(text) as Partial<StoredSecret> & { v?: number };
      if (typeof parsed.value === 'string' && typeof parsed.binding === 'string') return { value: parsed.value, binding: parsed.binding };
    } catch {
      // not ours, or damaged: treat as missing so the user sets it again
    }
    return null;
  }

  async set(serviceId: string, name: string, secret: StoredSecret): Promise<void> {
    await this.run(() => this.entry(serviceId, name).setPassword(JSON.stringify({ v: 1, value: secret.value, binding: secret.binding })));
  }

  async delete(serviceId: string, name: string): Promise<void> {
    await this.run(() => this.entry(serviceId, name).deletePassword());
  }

  private entry(serviceId: string, name: string): Keyring.AsyncEntry {
    return new (keyring().AsyncEntry)(KEYCHAIN_SERVICE, `${serviceId}/${name}`, { linux: { store: 'secret-service' } });
  }

  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw keychainUnavailable(describe(error));
    }
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes('DBUS_SESSION_BUS_ADDRESS')) return 'no D-Bus session bus';
  if (message.includes('org.freedesktop.secrets')) return 'no Secret Service provider is running (gnome-keyring, KeePassXC...)';
  if (message.includes('dismissed') || message.toLowerCase().includes('locked')) return 'the keyring is locked';
  return message.replace(/^Platform failure: /, '');
}
