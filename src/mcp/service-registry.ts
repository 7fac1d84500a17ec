import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { LIMITS, WispError, isRemoteTransport, type ServiceRef, type ServiceTransport } from '../core/index.js';
import type { SandboxProfile, ServiceOrigin, ServiceStore, StoredService } from './service-store.js';
import { checkedProfile } from './sandbox/grants.js';
import { isWispGateway, selfGatewayError } from './self-gateway.js';
import { ID_SHAPED_NAME, isIdShaped, sameName } from './service-names.js';
import type { RegistryChange } from './events.js';

type SecretRef = { readonly name: string; readonly storage: 'keychain' | 'session'; readonly plain?: boolean | undefined };
type OAuthConfig = { readonly enabled: boolean; readonly clientId: string | null; readonly scopes: string | null };
type Template = { readonly name: string; readonly template: string };

export interface RegisterInput {
  readonly name: string;
  /** Default stdio. */
  readonly transport?: ServiceTransport | undefined;
  /** stdio: the program. http: ignored (stored empty). */
  readonly command: string;
  readonly url?: string | undefined;
  readonly env?: readonly SecretRef[] | undefined;
  readonly headers?: readonly SecretRef[] | undefined;
  readonly oauth?: OAuthConfig | null | undefined;
  readonly args?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
  readonly timeoutMs?: number | undefined;
  readonly origin?: ServiceOrigin | undefined;
  /** Config sources: which `${VAR}` in command, args and url the daemon's environment fills in at launch. */
  readonly fromEnvironment?: readonly string[] | undefined;
  /** Config sources and imports: env and header values written with `${VAR}`, kept as written. */
  readonly envTemplates?: readonly Template[] | undefined;
  readonly headerTemplates?: readonly Template[] | undefined;
  /** stdio: the sandbox; absent: the default (sandboxed, no network, the cwd read-write). */
  readonly sandbox?: SandboxProfile | undefined;
  /** Pass media whole to gateway clients (default: markers). */
  readonly media?: boolean | undefined;
}

export interface UpdateInput {
  readonly name?: string | undefined;
  readonly command?: string | undefined;
  readonly args?: readonly string[] | undefined;
  readonly cwd?: string | null | undefined;
  readonly timeoutMs?: number | null | undefined;
  /** Variable names and storage (values never reach the registry). */
  readonly env?: readonly SecretRef[] | undefined;
  readonly url?: string | undefined;
  readonly headers?: readonly SecretRef[] | undefined;
  readonly oauth?: OAuthConfig | null | undefined;
  readonly origin?: ServiceOrigin | undefined;
  /** Given by a config source sync; otherwise kept only while command, args and url are unchanged. */
  readonly fromEnvironment?: readonly string[] | undefined;
  /** Given by a config source sync; otherwise kept, but for a name now set by hand (env, headers). */
  readonly envTemplates?: readonly Template[] | undefined;
  readonly headerTemplates?: readonly Template[] | undefined;
  /** stdio: a new sandbox profile (the whole of it); absent: kept. */
  readonly sandbox?: SandboxProfile | undefined;
  /** The media setting; absent: kept. An edit like any other (disabled, trusted again). */
  readonly media?: boolean | undefined;
}

/**
 * The registry of service configurations: one writer, every change persisted (atomically)
 * before it is applied, acknowledged or announced. It holds configuration only; whether a
 * service runs is the supervisor's business, and nothing here ever starts anything.
 */
export class ServiceRegistry {
  private services: StoredService[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: ServiceStore,
    private readonly onChange: (change: RegistryChange) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Adopts what was loaded from disk. Every service starts disabled. Returns what breaks the
   * naming rules in a registry written before them (an id-shaped name, names equal but for
   * case): those services are kept, and such a name reaches them only when given exactly.
   */
  adopt(services: readonly StoredService[]): string[] {
    this.services = services.map((service) => ({ ...service, enabled: false }));
    const problems: string[] = [];
    for (const [index, service] of this.services.entries()) {
      if (isIdShaped(service.name)) problems.push(`service ${JSON.stringify(service.name)} (${service.id}) ${ID_SHAPED_NAME}: rename it (wispctl mcp edit)`);
      const twin = this.services.slice(0, index).find((other) => sameName(other.name, service.name));
      if (twin !== undefined) problems.push(`services ${JSON.stringify(twin.name)} and ${JSON.stringify(service.name)} differ only in case: rename one (wispctl mcp edit)`);
    }
    return problems;
  }

  list(): readonly StoredService[] {
    return this.services;
  }

  get(ref: ServiceRef): StoredService {
    return this.find(ref);
  }

  get count(): number {
    return this.services.length;
  }

  register(input: RegisterInput): Promise<StoredService> {
    return this.serialize(async () => {
      this.assertNameFree(input.name, undefined);
      if (this.services.length >= LIMITS.maxServices) {
        throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxServices} services may be registered`, {
          limit: 'maxServices',
          max: LIMITS.maxServices,
        });
      }
      const remote = isRemoteTransport(input.transport) ? input.transport : undefined;
      const http = remote !== undefined;
      if (http) assertUrl(input.url);
      else assertCommand(input.command);
      // Wisp's own gateway is a client of Wisp, never a server for it (src/mcp/self-gateway.ts).
      if (!http && isWispGateway({ command: input.command, args: input.args ?? [] })) throw selfGatewayError(input.name, 'registered');
      assertAbsoluteCwd(input.cwd);
      if (http && input.sandbox !== undefined) throw notLocal(input.name);
      const sandbox = http ? undefined : await checkedProfile(input.sandbox);
      const at = this.now().toISOString();
      const service: StoredService = {
        id: randomUUID(),
        name: input.name,
        ...(remote !== undefined ? { transport: remote, url: input.url ?? null, headers: (input.headers ?? []).map((h) => ({ ...h })), oauth: input.oauth != null ? { ...input.oauth } : null } : {}),
        command: http ? '' : input.command,
        args: http ? [] : [...(input.args ?? [])],
        cwd: input.cwd ?? null,
        timeoutMs: input.timeoutMs ?? null,
        env: (input.env ?? []).map((v) => ({ ...v })),
        ...(sandbox !== undefined ? { sandbox } : {}),
        ...(input.media === true ? { media: true } : {}),
        ...(input.origin !== undefined ? { origin: input.origin } : {}),
        ...(input.fromEnvironment !== undefined && input.fromEnvironment.length > 0 ? { fromEnvironment: [...input.fromEnvironment] } : {}),
        ...(!http && input.envTemplates !== undefined && input.envTemplates.length > 0 ? { envTemplates: input.envTemplates.map((t) => ({ ...t })) } : {}),
        ...(http && input.headerTemplates !== undefined && input.headerTemplates.length > 0 ? { headerTemplates: input.headerTemplates.map((t) => ({ ...t })) } : {}),
        enabled: false,
        configVersion: 1,
        createdAt: at,
        updatedAt: at,
      };
      await this.commit([...this.services, service]);
      this.onChange({ kind: 'service.registered', service });
      return service;
    });
  }

  /**
   * Edits a service. `change` may be a function of the current configuration: it runs in
   * the write queue (so it sees every earlier write, even pipelined ones) and may do work
   * that must happen before the commit, such as saving secret values. `beforeCommit` runs
   * after every check, just before the write, and can veto it by throwing.
   */
  update(
    ref: ServiceRef,
    change: UpdateInput | ((current: StoredService) => Promise<UpdateInput>),
    expectedVersion?: number,
    beforeCommit?: (current: StoredService, next: StoredService) => Promise<void>,
  ): Promise<StoredService> {
    return this.serialize(async () => {
      const current = this.find(ref);
      if (expectedVersion !== undefined && expectedVersion !== current.configVersion) {
        throw new WispError(
          'VERSION_CONFLICT',
          `service ${current.name} is at configVersion ${current.configVersion}, not ${expectedVersion}: it was edited meanwhile`,
          { id: current.id, configVersion: current.configVersion },
        );
      }
      const set = typeof change === 'function' ? await change(current) : change;
      if (set.name !== undefined && set.name !== current.name) this.assertNameFree(set.name, current.id);
      const http = isRemoteTransport(current.transport);
      if (set.command !== undefined && !http) assertCommand(set.command);
      if (!http && (set.command !== undefined || set.args !== undefined) && isWispGateway({ command: set.command ?? current.command, args: set.args ?? current.args })) {
        throw selfGatewayError(set.name ?? current.name, 'registered');
      }
      if (set.url !== undefined && http) assertUrl(set.url);
      assertAbsoluteCwd(set.cwd);
      if (http && set.sandbox !== undefined) throw notLocal(current.name);
      const sandbox = set.sandbox !== undefined ? await checkedProfile(set.sandbox) : undefined;
      // An edited command, args or url no longer has its templates filled in from the daemon's environment.
      const launchChanged =
        (set.command !== undefined && set.command !== current.command) ||
        (set.args !== undefined && JSON.stringify(set.args) !== JSON.stringify(current.args)) ||
        (set.url !== undefined && set.url !== current.url);
      const fromEnvironment = set.fromEnvironment ?? (launchChanged ? [] : (current.fromEnvironment ?? []));
      const { fromEnvironment: _previous, envTemplates: _env, headerTemplates: _headers, media: _media, ...kept } = current;
      // A value set by hand replaces the template of the same name.
      const env = set.env !== undefined ? set.env.map((v) => ({ ...v })) : (current.env ?? []);
      const headers = set.headers !== undefined ? set.headers.map((h) => ({ ...h })) : (current.headers ?? []);
      const envTemplates = (set.envTemplates ?? current.envTemplates ?? []).filter((t) => !env.some((v) => v.name === t.name)).map((t) => ({ ...t }));
      const headerTemplates = (set.headerTemplates ?? current.headerTemplates ?? []).filter((t) => !headers.some((h) => h.name.toLowerCase() === t.name.toLowerCase())).map((t) => ({ ...t }));
      const next: StoredService = {
        ...kept,
        ...(fromEnvironment.length > 0 ? { fromEnvironment: [...fromEnvironment] } : {}),
        ...(!http && envTemplates.length > 0 ? { envTemplates } : {}),
        ...(http && headerTemplates.length > 0 ? { headerTemplates } : {}),
        name: set.name ?? current.name,
        command: http ? '' : (set.command ?? current.command),
        ...(http
          ? {
              url: set.url ?? current.url ?? null,
              headers,
              oauth: set.oauth !== undefined ? (set.oauth === null ? null : { ...set.oauth }) : (current.oauth ?? null),
            }
          : {}),
        ...(set.origin !== undefined ? { origin: set.origin } : {}),
        ...(sandbox !== undefined ? { sandbox } : {}),
        ...((set.media ?? current.media) === true ? { media: true } : {}),
        args: set.args !== undefined ? [...set.args] : current.args,
        cwd: set.cwd !== undefined ? set.cwd : current.cwd,
        timeoutMs: set.timeoutMs !== undefined ? set.timeoutMs : (current.timeoutMs ?? null),
        env,
        enabled: false,
        configVersion: current.configVersion + 1,
        updatedAt: this.now().toISOString(),
      };
      await beforeCommit?.(current, next);
      await this.commit(this.services.map((service) => (service.id === current.id ? next : service)));
      this.onChange({ kind: 'service.updated', service: next });
      return next;
    });
  }

  /**
   * Sets a service's live network grants (`wispctl mcp allow`): what `change` makes of the
   * current ones, committed without a configVersion bump, announced as service.granted (not
   * an edit: the service keeps running, and its egress proxy reads them on each connection).
   */
  setNetGrants(ref: ServiceRef, change: (current: StoredService) => readonly string[]): Promise<StoredService> {
    return this.serialize(async () => {
      const current = this.find(ref);
      const grants = change(current);
      if (grants.length > LIMITS.maxSandboxGrants) throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxSandboxGrants} live network grants`, { limit: 'maxSandboxGrants', max: LIMITS.maxSandboxGrants });
      const { netGrants: _previous, ...kept } = current;
      const next: StoredService = { ...kept, ...(grants.length > 0 ? { netGrants: [...grants] } : {}), updatedAt: this.now().toISOString() };
      await this.commit(this.services.map((service) => (service.id === current.id ? next : service)));
      this.onChange({ kind: 'service.granted', service: next });
      return next;
    });
  }

  /** Removes a service; `beforeCommit` (in the write queue) can veto it by throwing. */
  delete(ref: ServiceRef, beforeCommit?: (current: StoredService) => Promise<void>): Promise<{ id: string; name: string }> {
    return this.serialize(async () => {
      const current = this.find(ref);
      await beforeCommit?.(current);
      await this.commit(this.services.filter((service) => service.id !== current.id));
      const deleted = { id: current.id, name: current.name };
      this.onChange({ kind: 'service.deleted', service: deleted });
      return deleted;
    });
  }

  /** Resolves when every queued write has finished. */
  async flush(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async commit(next: StoredService[]): Promise<void> {
    try {
      await this.store.save(next);
    } catch (error) {
      throw new WispError('STORAGE_FAILED', `could not write ${this.store.file}: ${(error as Error).message}`);
    }
    this.services = next;
  }

  private find(ref: ServiceRef): StoredService {
    if ((ref.id === undefined) === (ref.name === undefined)) {
      throw new WispError('INVALID_PARAMS', 'give exactly one of id or name');
    }
    // An id resolves only as an id and a name only as a name, exactly as given.
    const found =
      ref.id !== undefined
        ? this.services.find((service) => service.id === ref.id)
        : this.services.find((service) => service.name === ref.name);
    if (found === undefined) {
      const what = ref.id !== undefined ? `id ${ref.id}` : `name ${String(ref.name)}`;
      throw new WispError('SERVICE_NOT_FOUND', `no service with ${what}`, ref.id !== undefined ? { id: ref.id } : { name: ref.name });
    }
    // A registry from before the naming rules may hold a name that is another service's id:
    // a client that took that string for an id (or for a name) must not act on the wrong one.
    const key = ref.id ?? ref.name ?? '';
    const other = this.services.find((service) => service !== found && sameName(ref.id !== undefined ? service.name : service.id, key));
    if (other !== undefined) {
      throw new WispError('INVALID_PARAMS', `${JSON.stringify(key)} is ambiguous: it is the id or name of ${found.name} (${found.id}) and of ${other.name} (${other.id}); rename the service whose name looks like an id`, {
        field: ref.id !== undefined ? 'id' : 'name',
      });
    }
    return found;
  }

  private assertNameFree(name: string, exceptId: string | undefined): void {
    if (isIdShaped(name)) throw new WispError('INVALID_CONFIG', `the name ${JSON.stringify(name)} ${ID_SHAPED_NAME}`, { field: 'name' });
    const taken = this.services.find((service) => service.id !== exceptId && sameName(service.name, name));
    if (taken !== undefined) {
      const how = taken.name === name ? '' : ` (names are unique regardless of case: ${taken.name} exists)`;
      throw new WispError('SERVICE_NAME_TAKEN', `a service named ${name} already exists${how}`, { name });
    }
  }
}

function notLocal(name: string): WispError {
  return new WispError('INVALID_CONFIG', `${name} is a remote service: it runs elsewhere, and a sandbox is for the programs the daemon starts`, { field: 'sandbox' });
}

function assertUrl(url: string | undefined): void {
  if (url === undefined || !/^https?:\/\/[^\s]+$/.test(url)) {
    throw new WispError('INVALID_CONFIG', `a remote service needs an http(s) url, not ${JSON.stringify(url)}`, { field: 'url' });
  }
}

/** A command is an absolute path or a bare program name (looked up on PATH at activation). */
function assertCommand(command: string): void {
  if (command === '') throw new WispError('INVALID_CONFIG', 'command must not be empty', { field: 'command' });
  if (!path.isAbsolute(command) && command.includes('/')) {
    throw new WispError('INVALID_CONFIG', `command must be an absolute path or a bare program name, not ${JSON.stringify(command)}`, {
      field: 'command',
    });
  }
}

function assertAbsoluteCwd(cwd: string | null | undefined): void {
  if (typeof cwd === 'string' && !path.isAbsolute(cwd)) {
    throw new WispError('INVALID_CONFIG', `cwd must be an absolute path, not ${JSON.stringify(cwd)}`, { field: 'cwd' });
  }
}
