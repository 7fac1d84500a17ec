import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { LIMITS, WispError, type EventPayload, type Service, type ServiceRef } from '../control/index.js';
import type { ServiceStore, StoredService } from './service-store.js';

export interface RegisterInput {
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
}

export interface UpdateInput {
  readonly name?: string | undefined;
  readonly command?: string | undefined;
  readonly args?: readonly string[] | undefined;
  readonly cwd?: string | null | undefined;
}

/**
 * The registry of services: one writer, every change persisted (atomically) before it is
 * acknowledged or announced. Every new or edited service is disabled, and every service is
 * disabled when the daemon starts: nothing runs without a fresh trust decision.
 */
export class ServiceRegistry {
  private services: StoredService[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: ServiceStore,
    private readonly announce: (event: EventPayload) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Adopts what was loaded from disk, every service disabled. */
  adopt(services: readonly StoredService[]): void {
    this.services = services.map((service) => ({ ...service, enabled: false }));
  }

  list(): Service[] {
    return this.services.map(toView);
  }

  get(ref: ServiceRef): Service {
    return toView(this.find(ref));
  }

  get count(): number {
    return this.services.length;
  }

  get enabledCount(): number {
    return this.services.filter((service) => service.enabled).length;
  }

  register(input: RegisterInput): Promise<Service> {
    return this.serialize(async () => {
      this.assertNameFree(input.name);
      if (this.services.length >= LIMITS.maxServices) {
        throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxServices} services may be registered`, {
          limit: 'maxServices',
          max: LIMITS.maxServices,
        });
      }
      assertAbsoluteCwd(input.cwd);
      const at = this.now().toISOString();
      const service: StoredService = {
        id: randomUUID(),
        name: input.name,
        command: input.command,
        args: [...(input.args ?? [])],
        cwd: input.cwd ?? null,
        enabled: false,
        configVersion: 1,
        createdAt: at,
        updatedAt: at,
      };
      await this.commit([...this.services, service]);
      const view = toView(service);
      this.announce({ type: 'service.registered', service: view });
      return view;
    });
  }

  update(ref: ServiceRef, set: UpdateInput, expectedVersion?: number): Promise<Service> {
    return this.serialize(async () => {
      const current = this.find(ref);
      if (expectedVersion !== undefined && expectedVersion !== current.configVersion) {
        throw new WispError(
          'VERSION_CONFLICT',
          `service ${current.name} is at configVersion ${current.configVersion}, not ${expectedVersion}: it was edited meanwhile`,
          { id: current.id, configVersion: current.configVersion },
        );
      }
      if (set.name !== undefined && set.name !== current.name) this.assertNameFree(set.name);
      assertAbsoluteCwd(set.cwd);
      const next: StoredService = {
        ...current,
        name: set.name ?? current.name,
        command: set.command ?? current.command,
        args: set.args !== undefined ? [...set.args] : current.args,
        cwd: set.cwd !== undefined ? set.cwd : current.cwd,
        enabled: false,
        configVersion: current.configVersion + 1,
        updatedAt: this.now().toISOString(),
      };
      await this.commit(this.services.map((service) => (service.id === current.id ? next : service)));
      const view = toView(next);
      this.announce({ type: 'service.updated', service: view });
      return view;
    });
  }

  delete(ref: ServiceRef): Promise<{ id: string; name: string }> {
    return this.serialize(async () => {
      const current = this.find(ref);
      await this.commit(this.services.filter((service) => service.id !== current.id));
      const deleted = { id: current.id, name: current.name };
      this.announce({ type: 'service.deleted', service: deleted });
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
    const found =
      ref.id !== undefined
        ? this.services.find((service) => service.id === ref.id)
        : this.services.find((service) => service.name === ref.name);
    if (found === undefined) {
      const what = ref.id !== undefined ? `id ${ref.id}` : `name ${String(ref.name)}`;
      throw new WispError('SERVICE_NOT_FOUND', `no service with ${what}`, ref.id !== undefined ? { id: ref.id } : { name: ref.name });
    }
    return found;
  }

  private assertNameFree(name: string): void {
    if (this.services.some((service) => service.name === name)) {
      throw new WispError('SERVICE_NAME_TAKEN', `a service named ${name} already exists`, { name });
    }
  }
}

function assertAbsoluteCwd(cwd: string | null | undefined): void {
  if (typeof cwd === 'string' && !path.isAbsolute(cwd)) {
    throw new WispError('INVALID_CONFIG', `cwd must be an absolute path, not ${JSON.stringify(cwd)}`, { field: 'cwd' });
  }
}

function toView(service: StoredService): Service {
  return { ...service, args: [...service.args] };
}
