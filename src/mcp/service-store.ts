import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { RegistryLoadError } from '../core/index.js';
import type { RegistryDocument, StoredService } from './service-store-schema.js';
import { readSafe } from '../util/index.js';
import { checks } from '#generated/registry-check.js';
import { SCHEMA_VERSION } from './registry-version.js';
import { sweepTempFiles, writeFileAtomic } from '../util/index.js';

/**
 * mcp-servers.json: non-sensitive service configuration only. This is persisted, so
 * changes to its shape are additive and bump SCHEMA_VERSION with a migration. Its schema:
 * service-store-schema.ts (TypeBox, not loaded when the daemon runs: the check of it is
 * generated at build time, #generated/registry-check.js).
 */
export const REGISTRY_FILE = 'mcp-servers.json';
export { SCHEMA_VERSION };

export type { InstallOrigin, SandboxProfile, SourceOrigin, ServiceOrigin, StoredService } from './service-store-schema.js';

/** Why mcp-servers.json was not loaded: the wire's RegistryLoadError (daemon.status shows it). */
export type LoadProblem = Readonly<RegistryLoadError>;

export interface LoadResult {
  readonly services: StoredService[];
  readonly problem: LoadProblem | null;
  readonly sweptTempFiles: string[];
}

/** Reads and writes mcp-servers.json. Every write is atomic; a bad file is moved aside, never overwritten. */
export class ServiceStore {
  readonly file: string;
  // Generated at build time (scripts/validators.mjs): every start with services runs it, and
  // compiling it with ajv cost each start tens of milliseconds.
  private readonly validate = checks.registryDocument;

  constructor(
    dataDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.file = path.join(dataDir, REGISTRY_FILE);
  }

  async load(): Promise<LoadResult> {
    const sweptTempFiles = await sweepTempFiles(this.file);
    let text: string;
    try {
      text = await readSafe(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { services: [], problem: null, sweptTempFiles };
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { services: [], problem: await this.moveAside('REGISTRY_UNREADABLE', `not valid JSON: ${String(error)}`), sweptTempFiles };
    }
    if (!this.validate(parsed)) {
      const why = (this.validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
      return { services: [], problem: await this.moveAside('REGISTRY_INVALID', `fails the schema: ${why}`), sweptTempFiles };
    }
    const duplicate = findDuplicate(parsed.services);
    if (duplicate !== undefined) {
      return { services: [], problem: await this.moveAside('REGISTRY_INVALID', duplicate), sweptTempFiles };
    }
    return { services: parsed.services, problem: null, sweptTempFiles };
  }

  async save(services: readonly StoredService[]): Promise<void> {
    const document: RegistryDocument = { schemaVersion: SCHEMA_VERSION, services: [...services] };
    await writeFileAtomic(this.file, `${JSON.stringify(document, null, 2)}\n`);
  }

  private async moveAside(code: LoadProblem['code'], message: string): Promise<LoadProblem> {
    const at = this.now().toISOString();
    const movedTo = `${this.file}.corrupt-${at.replace(/[:.]/g, '-')}`;
    await fs.rename(this.file, movedTo);
    return { code, message, movedTo, at };
  }
}

function findDuplicate(services: readonly StoredService[]): string | undefined {
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const service of services) {
    if (ids.has(service.id)) return `duplicate service id ${service.id}`;
    if (names.has(service.name)) return `duplicate service name ${service.name}`;
    ids.add(service.id);
    names.add(service.name);
  }
  return undefined;
}
