import { LIMITS, WispError, isRemoteTransport, type ServiceTransport } from '../core/index.js';
import type { Secrets, VariableRef, VariableValue } from './secrets.js';

/** A service's secret list: a local service's variables, or a remote service's header values. */
export type SecretKind = 'env' | 'headers';

/** services.setEnv / services.setHeaders: the values given, and whether they replace the list or are merged into it. */
export interface SecretEdit {
  readonly kind: SecretKind;
  readonly mode: 'replace' | 'upsert';
  readonly given: readonly VariableValue[];
}

/**
 * Editing one service's secrets. Config holds names and storage only; the values go to the
 * keychain or the session store (through Secrets). `filedAs` names an entry in the stores
 * (a header's value is filed under its own prefixed name).
 */
export class ServiceSecrets {
  constructor(
    private readonly secrets: Secrets,
    private readonly filedAs: (kind: SecretKind, name: string) => string,
  ) {}

  /** Refused before anything is written: the wrong list for the transport, or a name given twice. */
  check(service: { readonly name: string; readonly transport?: ServiceTransport | undefined }, edit: SecretEdit): void {
    const { kind, given } = edit;
    if ((kind === 'headers') !== isRemoteTransport(service.transport)) {
      throw new WispError(
        'INVALID_CONFIG',
        kind === 'headers' ? `${service.name} is a local (stdio) service: set variables, not headers` : `${service.name} is a remote (${service.transport ?? 'http'}) service: set headers, not variables`,
        { field: kind },
      );
    }
    const names = given.map((v) => normalized(kind, v.name));
    const duplicate = given.find((v, i) => names.indexOf(normalized(kind, v.name)) !== i);
    if (duplicate !== undefined) throw new WispError('INVALID_CONFIG', `${duplicate.name} is given twice`, { field: kind });
  }

  /**
   * Writes the given values (a keychain failure changes nothing) and returns the list as it
   * is to be saved, and the entries no longer wanted: erase those once the list is saved.
   */
  async write(serviceId: string, binding: string, before: readonly VariableRef[], edit: SecretEdit): Promise<{ after: VariableRef[]; gone: VariableRef[] }> {
    const { kind, given, mode } = edit;
    const names = given.map((v) => normalized(kind, v.name));
    const kept = mode === 'upsert' ? before.filter((v) => !names.includes(normalized(kind, v.name))) : [];
    const after: VariableRef[] = [...kept, ...given.map((v) => ({ name: v.name, storage: v.storage, ...(v.plain === true ? { plain: true } : {}) }))];
    if (after.length > LIMITS.maxEnvVars) {
      throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxEnvVars} ${kind === 'env' ? 'variables' : 'headers'} per service`, { limit: 'maxEnvVars', max: LIMITS.maxEnvVars });
    }
    await this.secrets.write(serviceId, binding, given.map((v) => ({ name: this.filedAs(kind, v.name), value: v.value, storage: v.storage, plain: v.plain })));
    const gone = before.filter((old) => !after.some((v) => v.name === old.name && v.storage === old.storage)).map((v) => ({ name: this.filedAs(kind, v.name), storage: v.storage }));
    return { after, gone };
  }

  /** Erases entries from the stores (after the list that named them was saved). */
  erase(serviceId: string, refs: readonly VariableRef[]): Promise<void> {
    return this.secrets.erase(serviceId, refs);
  }
}

/** Header names are case-insensitive; variable names are not. */
function normalized(kind: SecretKind, name: string): string {
  return kind === 'headers' ? name.toLowerCase() : name;
}
