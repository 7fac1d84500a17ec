import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { WispError } from '../core/index.js';
import { readSafe } from '../util/index.js';
import { jsonProblem, moveAside, schemaProblem, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from './deepseek.js';

/** Install settings (see src/install): where Node/npm are looked for, the registry, a CA bundle, the time limit. */
export interface InstallSettingsView {
  readonly runtimeDirs: readonly string[];
  readonly registry: string | null;
  readonly caFile: string | null;
  readonly timeoutMs: number;
}
export type InstallSettingsChange = Partial<{ runtimeDirs: string[]; registry: string | null; caFile: string | null; timeoutMs: number }>;

/** settings.json in the data dir: model settings (never the key itself) and install settings. Persisted: additive changes only. */
const SettingsDocument = Type.Object(
  {
    schemaVersion: Type.Literal(1),
    model: Type.Object(
      {
        baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
        model: Type.Optional(Type.String({ minLength: 1 })),
        firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
        idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 100 })),
        maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
        deferToolsAbove: Type.Optional(Type.Integer({ minimum: 0, maximum: 128 })),
        keyStorage: Type.Optional(Type.Union([Type.Literal('keychain'), Type.Literal('session'), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    installs: Type.Optional(
      Type.Object(
        {
          runtimeDirs: Type.Optional(Type.Array(Type.String({ pattern: '^/' }), { minItems: 1, maxItems: 16 })),
          registry: Type.Optional(Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()])),
          caFile: Type.Optional(Type.Union([Type.String({ pattern: '^/' }), Type.Null()])),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type SettingsDocument = Static<typeof SettingsDocument>;
export type KeyStorage = 'keychain' | 'session' | null;

export class ModelSettingsStore {
  readonly file: string;
  private document: SettingsDocument = { schemaVersion: 1, model: {} };
  private writes: Promise<unknown> = Promise.resolve();
  private readonly validate = new Ajv({ allErrors: true, strict: true }).compile<SettingsDocument>(SettingsDocument);

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'settings.json');
  }

  /**
   * Reads settings.json. A file that is not JSON or fails the schema is moved aside intact
   * (`settings.json.bad-<time>`) and the defaults apply; the problem is returned, never thrown.
   */
  async load(now: Date = new Date()): Promise<StorageProblem | null> {
    let text: string;
    try {
      text = await readSafe(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      // Not ours (planted, shared, a symlink): the daemon refuses to start rather than use it.
      if ((error as { code?: unknown }).code === 'UNSAFE_FILE') throw error;
      return { file: this.file, problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): model defaults apply`, movedTo: null };
    }
    let problem: string;
    try {
      const parsed: unknown = JSON.parse(text);
      if (this.validate(parsed)) {
        this.document = parsed;
        return null;
      }
      problem = schemaProblem(this.validate.errors);
    } catch (error) {
      problem = jsonProblem(error);
    }
    try {
      const movedTo = await moveAside(this.file, now);
      return { file: this.file, problem: `${problem}: moved aside, model defaults apply`, movedTo };
    } catch (error) {
      return { file: this.file, problem: `${problem}: model defaults apply (it could not be moved aside: ${(error as NodeJS.ErrnoException).code ?? String(error)})`, movedTo: null };
    }
  }

  get settings(): ModelSettings {
    const m = this.document.model;
    return {
      ...DEFAULT_MODEL_SETTINGS,
      ...(m.baseUrl !== undefined ? { baseUrl: m.baseUrl } : {}),
      ...(m.model !== undefined ? { model: m.model } : {}),
      ...(m.firstByteTimeoutMs !== undefined ? { firstByteTimeoutMs: m.firstByteTimeoutMs } : {}),
      ...(m.idleTimeoutMs !== undefined ? { idleTimeoutMs: m.idleTimeoutMs } : {}),
      ...(m.maxRetries !== undefined ? { maxRetries: m.maxRetries } : {}),
      ...(m.deferToolsAbove !== undefined ? { deferToolsAbove: m.deferToolsAbove } : {}),
    };
  }

  get keyStorage(): KeyStorage {
    return this.document.model.keyStorage ?? null;
  }

  installs(defaults: InstallSettingsView): InstallSettingsView {
    const i = this.document.installs ?? {};
    return {
      runtimeDirs: i.runtimeDirs ?? defaults.runtimeDirs,
      registry: i.registry !== undefined ? i.registry : defaults.registry,
      caFile: i.caFile !== undefined ? i.caFile : defaults.caFile,
      timeoutMs: i.timeoutMs ?? defaults.timeoutMs,
    };
  }

  updateInstalls(change: InstallSettingsChange): Promise<void> {
    return this.write((current) => ({ ...current, installs: { ...current.installs, ...change } }));
  }

  update(change: Partial<Omit<SettingsDocument['model'], 'keyStorage'>> & { keyStorage?: KeyStorage }): Promise<void> {
    return this.write((current) => ({ ...current, model: { ...current.model, ...change } }));
  }

  /** One write at a time, each applied to the document the previous one left. */
  private write(change: (current: SettingsDocument) => SettingsDocument): Promise<void> {
    const run = this.writes.then(async () => {
      const next = change(this.document);
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
