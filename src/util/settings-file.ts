import { WispError } from '../core/index.js';
import { writeFileAtomic } from './atomic-file.js';
import { jsonProblem, moveAside, schemaProblem, type StorageProblem } from './persisted.js';
import { readSafe } from './safe-file.js';

type SchemaErrors = readonly { instancePath: string; message?: string | undefined }[];

/** A check of one section's value (an ajv ValidateFunction is one). */
export type SectionCheck<T> = ((value: unknown) => value is T) & { errors?: SchemaErrors | null | undefined };

/** One top-level section of the settings file, owned (schema, type, defaults) by one area. */
export interface SectionDefinition<T> {
  readonly key: string;
  readonly check: SectionCheck<T>;
  /** Written when the file has no such section; a section with one must be in every file read. Absent: the section is optional. */
  readonly initial?: T;
}

/** An area's handle on its section: the value read (undefined while the file has none) and its writes. */
export interface SettingsSection<T> {
  readonly value: T | undefined;
  /** Applies `change` to the current value and writes the whole file (atomically, one write at a time). */
  update(change: (current: T | undefined) => T): Promise<void>;
}

/**
 * settings.json in the data dir: `{"schemaVersion": 1, <section>: {...}, ...}`, each section
 * owned by one area (model settings by model/, install settings by install/) and all written
 * as one file. A file that is not JSON, has an unknown section, or fails a section's check is
 * moved aside intact (`settings.json.bad-<time>`) and every area's defaults apply; the
 * problem is returned, never thrown.
 */
export class SettingsFile {
  private readonly definitions = new Map<string, SectionDefinition<unknown>>();
  /** The document as written: schemaVersion first, then the sections in the order first seen. */
  private document: Record<string, unknown> = { schemaVersion: 1 };
  private writes: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  /** Declares a section (before load). */
  section<T>(definition: SectionDefinition<T>): SettingsSection<T> {
    this.definitions.set(definition.key, definition);
    if (definition.initial !== undefined) this.document[definition.key] = definition.initial;
    const read = (): T | undefined => {
      const value = this.document[definition.key];
      return definition.check(value) ? value : undefined;
    };
    return {
      get value() {
        return read();
      },
      update: (change) => this.write(definition.key, () => change(read())),
    };
  }

  async load(now: Date = new Date()): Promise<StorageProblem | null> {
    let text: string;
    try {
      text = await readSafe(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      // Not ours (planted, shared, a symlink): the daemon refuses to start rather than use it.
      if ((error as { code?: unknown }).code === 'UNSAFE_FILE') throw error;
      return { file: this.file, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): defaults apply`, movedTo: null };
    }
    let problem: string;
    try {
      const parsed: unknown = JSON.parse(text);
      const errors = this.check(parsed);
      if (errors.length === 0) {
        this.document = { ...(parsed as Record<string, unknown>) };
        return null;
      }
      problem = schemaProblem(errors);
    } catch (error) {
      problem = jsonProblem(error);
    }
    try {
      const movedTo = await moveAside(this.file, now);
      return { file: this.file, problem: `${problem}: moved aside, defaults apply`, movedTo };
    } catch (error) {
      return { file: this.file, problem: `${problem}: defaults apply (it could not be moved aside: ${(error as NodeJS.ErrnoException).code ?? String(error)})`, movedTo: null };
    }
  }

  /** Every problem of the document (paths and schema words only); empty when it is acceptable. */
  private check(parsed: unknown): SchemaErrors {
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [{ instancePath: '', message: 'must be object' }];
    const document = parsed as Record<string, unknown>;
    if (document.schemaVersion !== 1) return [{ instancePath: '/schemaVersion', message: 'must be equal to constant' }];
    const errors: SchemaErrors[number][] = [];
    for (const key of Object.keys(document)) {
      if (key !== 'schemaVersion' && !this.definitions.has(key)) errors.push({ instancePath: '', message: 'must NOT have additional properties' });
    }
    for (const [key, definition] of this.definitions) {
      if (!Object.hasOwn(document, key)) {
        if (definition.initial !== undefined) errors.push({ instancePath: '', message: `must have required property '${key}'` });
      } else if (!definition.check(document[key])) {
        errors.push(...(definition.check.errors ?? [{ instancePath: '', message: 'is invalid' }]).map((e) => ({ ...e, instancePath: `/${key}${e.instancePath}` })));
      }
    }
    return errors;
  }

  /** One write at a time, each applied to the document the previous one left. */
  private write(key: string, value: () => unknown): Promise<void> {
    const run = this.writes.then(async () => {
      const next = { ...this.document, [key]: value() };
      try {
        await writeFileAtomic(this.file, `${JSON.stringify(next, null, 2)}\n`);
      } catch (error) {
        throw new WispError('STORAGE_FAILED', `could not write ${this.file}: ${(error as Error).message}`);
      }
      this.document = next;
    });
    this.writes = run.catch(() => undefined);
    return run;
  }
}
