import { WispError, type Storage } from '../core/index.js';
import { canonicalJson, sha256Hex } from '../util/index.js';
import type { Redactor } from './redactor.js';
import type { SecretStore, StoredSecret } from './secret-store.js';

export type { Storage };

export interface VariableRef {
  readonly name: string;
  readonly storage: Storage;
  /**
   * Not a secret (see isPlainValue): kept in the store like the others, but never held by
   * the redactor, so an approval shows arguments holding it exactly as they are sent.
   */
  readonly plain?: boolean | undefined;
}

export interface VariableValue extends VariableRef {
  readonly value: string;
}

/** Who holds a service's value in the redactor. */
export function secretHolder(serviceId: string, name: string, storage: Storage): string {
  return `service:${serviceId}/${storage}/${name}`;
}

/** The digest every stored value is bound to: the program it was given to. */
export function launchBinding(launch: {
  command: string;
  args: readonly string[];
  cwd: string | null;
  url?: string | null | undefined;
  fromEnvironment?: readonly string[] | undefined;
}): string {
  // A remote service's secrets (headers) are bound to its URL too: an edited URL never gets old tokens.
  const url = typeof launch.url === 'string' ? { url: launch.url } : {};
  // Templates the daemon's environment fills in: bound as templates, and as filled from there.
  const fromEnvironment = launch.fromEnvironment !== undefined && launch.fromEnvironment.length > 0 ? { fromEnvironment: [...launch.fromEnvironment] } : {};
  return sha256Hex(canonicalJson({ command: launch.command, args: launch.args, cwd: launch.cwd, ...url, ...fromEnvironment }));
}

/**
 * The rules for service secrets. Config holds names and storage only; values go to the
 * keychain (or memory, for this run), each bound to the command, args and cwd. Nothing
 * here touches a store for a service without variables. Every value that becomes known is
 * handed to the redactor.
 */
export class Secrets {
  constructor(
    private readonly keychain: SecretStore,
    private readonly session: SecretStore,
    private readonly redactor: Redactor,
  ) {}

  /**
   * Writes values (the user saved them), all or nothing: when the keychain refuses one
   * halfway, the entries already written are put back as they were before it throws.
   */
  async write(serviceId: string, binding: string, variables: readonly VariableValue[]): Promise<void> {
    const written: { variable: VariableValue; before: StoredSecret | null }[] = [];
    try {
      for (const variable of variables) {
        const store = this.store(variable.storage);
        const before = await store.get(serviceId, variable.name);
        await store.set(serviceId, variable.name, { value: variable.value, binding });
        written.push({ variable, before });
      }
    } catch (error) {
      for (const { variable, before } of written.reverse()) {
        const store = this.store(variable.storage);
        await (before === null ? store.delete(serviceId, variable.name) : store.set(serviceId, variable.name, before)).catch(() => undefined);
      }
      throw error;
    }
    for (const variable of variables) {
      const holder = secretHolder(serviceId, variable.name, variable.storage);
      // A value set plain where a secret was: the secret's hold ends (another holder of the same value keeps it).
      if (variable.plain === true) this.redactor.release(holder);
      else this.redactor.hold(holder, variable.name, variable.value);
    }
  }

  /** Removes entries (a variable was dropped, moved to other storage, or its service deleted). */
  async erase(serviceId: string, variables: readonly VariableRef[]): Promise<void> {
    for (const variable of variables) {
      await this.store(variable.storage).delete(serviceId, variable.name);
      // Only this service's hold ends: another holder of the same value keeps it redacted.
      this.redactor.release(secretHolder(serviceId, variable.name, variable.storage));
    }
  }

  /**
   * Reads a service's variables for activation. Refused when any is missing (session values
   * vanish with the daemon) or was stored for another command, args or cwd.
   */
  async read(serviceId: string, binding: string, variables: readonly VariableRef[], serviceName = serviceId): Promise<Record<string, string>> {
    if (variables.length === 0) return {};
    const env: Record<string, string> = {};
    const missing: string[] = [];
    const changed: string[] = [];
    for (const variable of variables) {
      const secret = await this.store(variable.storage).get(serviceId, variable.name);
      if (secret === null) missing.push(variable.name);
      else if (secret.binding !== binding) changed.push(variable.name);
      else {
        env[variable.name] = secret.value;
        if (variable.plain !== true) this.redactor.hold(secretHolder(serviceId, variable.name, variable.storage), variable.name, secret.value);
      }
    }
    if (missing.length > 0) {
      throw new WispError(
        'SECRET_MISSING',
        `these variables have no value (session-only values vanish when the daemon stops) and must be entered again: ${missing.join(', ')}`,
        { names: missing },
      );
    }
    if (changed.length > 0) {
      throw new WispError(
        'SECRET_BINDING_CHANGED',
        `the command, args or cwd changed since these variables were saved, so they are not handed to the new program: ${changed.join(', ')}. Set them again, or confirm the carry-over (wispctl mcp env carry-over ${serviceName})`,
        { names: changed },
      );
    }
    return env;
  }

  /** The user confirmed that the saved values may go to the edited program: re-bind them. */
  async carryOver(serviceId: string, binding: string, variables: readonly VariableRef[]): Promise<void> {
    const missing: string[] = [];
    for (const variable of variables) {
      const store = this.store(variable.storage);
      const secret = await store.get(serviceId, variable.name);
      if (secret === null) missing.push(variable.name);
      else await store.set(serviceId, variable.name, { value: secret.value, binding });
    }
    if (missing.length > 0) {
      throw new WispError('SECRET_MISSING', `these variables have no value to carry over: ${missing.join(', ')}`, { names: missing });
    }
  }

  private store(storage: Storage): SecretStore {
    return storage === 'keychain' ? this.keychain : this.session;
  }
}
