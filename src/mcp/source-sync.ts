import path from 'node:path';
import { LIMITS, WispError, type SourcesReport } from '../core/index.js';
import { mergeSources, type SourceEntry } from './config-sources.js';
import { isPlainValue } from './env-rules.js';
import type { RegisterInput, ServiceRegistry } from './service-registry.js';
import type { SourceOrigin, StoredService } from './service-store.js';
import { readSourceFiles, type ProjectSource } from './source-files.js';
import { sameName } from './service-names.js';

/** Where a header's value is kept in the secret store (beside the service's variables). */
export const HEADER_SECRET_PREFIX = 'header:';

export interface SecretValue {
  readonly name: string;
  readonly value: string;
  /** No secret: stored, never redacted (isPlainValue). */
  readonly plain?: boolean | undefined;
}

export interface SourceSyncDeps {
  readonly registry: ServiceRegistry;
  readonly configDir: () => string;
  readonly projects: () => readonly ProjectSource[];
  /** The daemon's environment, for ${VAR} expansion. */
  readonly env: () => Readonly<Record<string, string | undefined>>;
  /** Values from files go to the session store: the file is their source, re-read at every sync. */
  readonly writeSecrets: (config: StoredService, values: readonly (SecretValue & { storage: 'session' | 'keychain' })[]) => Promise<void>;
  readonly eraseSecrets: (config: StoredService) => Promise<void>;
  /** Waits until a service is stopped (an updated entry is disabled before the sync reports it). */
  readonly stop: (serviceId: string) => Promise<void>;
  /** The values stored now (session store), or null for any missing. */
  readonly storedSecrets: (config: StoredService) => Promise<Readonly<Record<string, string>> | null>;
  /** A source that is there but cannot be used (raised as a storage.warning at every sync that meets it). */
  readonly warn: (problem: { readonly file: string; readonly problem: string }) => void;
}

export type SyncAction = SyncedEntry['action'];

/** A sync's report is what sources.list shows (one definition: the wire's). */
export type SyncReport = SourcesReport;
export type SyncedEntry = SourcesReport['entries'][number];

/**
 * What registering an entry takes: the configuration (variable and header NAMES, kept in
 * `storage`; values written with a `${VAR}` as their templates) and the values for the
 * secret store (headers under `header:<Name>`).
 * Used by the sync and by the one-off import.
 */
export function entryRegistration(entry: SourceEntry, storage: 'keychain' | 'session'): { input: RegisterInput; values: (SecretValue & { storage: 'keychain' | 'session' })[] } {
  return {
    input: {
      name: entry.name,
      transport: entry.transport,
      command: entry.command,
      args: entry.args,
      fromEnvironment: entry.fromEnvironment,
      url: entry.url ?? undefined,
      cwd: entry.cwd ?? undefined,
      // A path or a setting is no secret: stored all the same, never redacted (isPlainValue).
      env: Object.entries(entry.env).map(([name, value]) => ({ name, storage, ...(isPlainValue(name, value) ? { plain: true } : {}) })),
      headers: Object.keys(entry.headers).map((name) => ({ name, storage })),
      envTemplates: Object.entries(entry.envTemplates).map(([name, template]) => ({ name, template })),
      headerTemplates: Object.entries(entry.headerTemplates).map(([name, template]) => ({ name, template })),
      oauth: entry.oauth,
    },
    values: [
      ...Object.entries(entry.env).map(([name, value]) => ({ name, value, storage, plain: isPlainValue(name, value) })),
      ...Object.entries(entry.headers).map(([name, value]) => ({ name: `${HEADER_SECRET_PREFIX}${name}`, value, storage })),
    ],
  };
}

function originOf(entry: SourceEntry): SourceOrigin {
  return { kind: 'source', source: entry.origin.source, file: entry.origin.file, plugin: entry.origin.plugin, digest: entry.digest };
}

function sameSecrets(stored: Readonly<Record<string, string>> | null, wanted: readonly SecretValue[]): boolean {
  if (stored === null) return wanted.length === 0;
  return wanted.length === Object.keys(stored).length && wanted.every((v) => stored[v.name] === v.value);
}

/** Whether `file` is `place` or inside it (a problem may name a directory: the config dir, plugins/). */
function within(file: string, place: string): boolean {
  return file === place || file.startsWith(place.endsWith(path.sep) ? place : `${place}${path.sep}`);
}

/**
 * Syncs the merged config sources into the registry, at daemon start and on `mcp reload`
 * (never on its own). An entry whose content changed is updated, which stops and
 * disables it until trusted again; an entry gone from its source is removed; services
 * registered by hand or by an install are never touched.
 */
export class SourceSync {
  private queue: Promise<unknown> = Promise.resolve();
  private last: SyncReport | null = null;

  constructor(
    private readonly deps: SourceSyncDeps,
    private readonly now: () => Date,
  ) {}

  get report(): SyncReport | null {
    return this.last;
  }

  sync(): Promise<SyncReport> {
    const run = this.queue.then(() => this.run());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(): Promise<SyncReport> {
    const { registry } = this.deps;
    const gave = (file: string): boolean => registry.list().some((s) => s.origin?.kind === 'source' && s.origin.file === file);
    const files = await readSourceFiles(this.deps.configDir(), this.deps.projects(), gave);
    const merged = mergeSources(files, this.deps.env());
    const entries: SyncedEntry[] = [];
    // The services of a source that is there but unusable stay as they were: neither updated by
    // another source's entry of the same name nor removed, until their own file can be read.
    const held = new Map<string, string[]>();
    for (const problem of merged.problems) {
      if (problem.code === undefined) continue;
      held.set(problem.file, registry.list().filter((s) => s.origin?.kind === 'source' && within(s.origin.file, problem.file)).map((s) => s.id));
    }
    const keep = new Set([...held.values()].flat());
    for (const entry of merged.entries) {
      const base = { name: entry.name, origin: entry.origin, transport: entry.transport, overrides: entry.overrides, warnings: [...entry.warnings] };
      try {
        const result = await this.apply(entry, keep);
        if (result.serviceId !== null) keep.add(result.serviceId);
        entries.push({ ...base, ...result });
      } catch (error) {
        entries.push({ ...base, action: 'skipped', reason: error instanceof WispError ? `${error.code}: ${error.message}` : String(error), serviceId: null });
      }
    }
    const removed: string[] = [];
    for (const service of registry.list()) {
      if (service.origin?.kind !== 'source' || keep.has(service.id)) continue;
      // Skipped entries of a source are removed too: their old config no longer describes them.
      await this.deps.eraseSecrets(service);
      await registry.delete({ id: service.id }).catch(() => undefined);
      removed.push(service.name);
    }
    const problems = merged.problems.map((problem) => {
      const ids = held.get(problem.file);
      if (ids === undefined) return problem;
      const kept = registry.list().filter((s) => ids.includes(s.id)).map((s) => s.name).sort();
      this.deps.warn({ file: problem.file, problem: `${problem.message} (${problem.code ?? ''}): this config source was skipped${kept.length > 0 ? `; the services it gave are kept as they were (${kept.join(', ')})` : ''}` });
      return { ...problem, kept };
    });
    this.last = { at: this.now().toISOString(), entries, skipped: merged.skipped, problems, removed };
    return this.last;
  }

  private async apply(entry: SourceEntry, held: ReadonlySet<string>): Promise<{ action: SyncAction; reason: string | null; serviceId: string | null }> {
    const { registry } = this.deps;
    const { input, values } = entryRegistration(entry, 'session');
    const existing = registry.list().find((s) => sameName(s.name, entry.name));
    if (existing !== undefined && held.has(existing.id) && existing.origin?.kind === 'source') {
      return { action: 'skipped', reason: `the name ${entry.name} is held by ${existing.name} from ${existing.origin.file}, which could not be used this time: kept as it was`, serviceId: null };
    }
    if (existing !== undefined && existing.origin?.kind !== 'source') {
      return { action: 'skipped', reason: `the name ${entry.name} is taken by ${existing.name === entry.name ? 'a service' : `${existing.name} (names are one regardless of case), a service`} registered ${existing.origin?.kind === 'install' ? 'by an install' : existing.origin?.kind === 'import' ? `by an import of ${existing.origin.file}` : 'by hand'}`, serviceId: null };
    }
    if (existing === undefined || (existing.transport ?? 'stdio') !== entry.transport) {
      if (existing === undefined && registry.count >= LIMITS.maxServices) {
        return { action: 'skipped', reason: `limit reached: at most ${LIMITS.maxServices} services`, serviceId: null };
      }
      if (existing !== undefined) {
        await this.deps.eraseSecrets(existing);
        await registry.delete({ id: existing.id });
      }
      const config = await registry.register({ ...input, origin: originOf(entry) });
      await this.deps.writeSecrets(config, values);
      return { action: existing === undefined ? 'added' : 'updated', reason: null, serviceId: config.id };
    }
    const origin = existing.origin;
    const sameContent = origin?.kind === 'source' && origin.digest === entry.digest && origin.file === entry.origin.file;
    const stored = await this.deps.storedSecrets(existing);
    if (sameContent && stored === null) {
      // After a restart the session store is empty: the values come back from the file.
      await this.deps.writeSecrets(existing, values);
      return { action: 'unchanged', reason: null, serviceId: existing.id };
    }
    if (sameContent && sameSecrets(stored, values)) return { action: 'unchanged', reason: null, serviceId: existing.id };
    await this.deps.eraseSecrets(existing);
    const config = await registry.update(
      { id: existing.id },
      // cwd as null, not undefined: an entry that lost its directory clears it.
      { ...input, cwd: entry.cwd, origin: originOf(entry) },
    );
    await this.deps.writeSecrets(config, values);
    await this.deps.stop(config.id);
    return { action: 'updated', reason: null, serviceId: config.id };
  }
}
