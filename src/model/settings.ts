import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { WispError } from '../control/index.js';
import { writeFileAtomic } from '../util/index.js';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from './deepseek.js';

/** settings.json in the data dir: model settings (never the key itself). Persisted: additive changes only. */
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
  },
  { additionalProperties: false },
);
type SettingsDocument = Static<typeof SettingsDocument>;
export type KeyStorage = 'keychain' | 'session' | null;

export class ModelSettingsStore {
  readonly file: string;
  private document: SettingsDocument = { schemaVersion: 1, model: {} };
  private readonly validate = new Ajv({ allErrors: true, strict: true }).compile<SettingsDocument>(SettingsDocument);

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'settings.json');
  }

  /** Reads settings.json; an unreadable file is reported and ignored (defaults apply), never overwritten until a change is saved. */
  async load(): Promise<string | null> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      return String(error);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!this.validate(parsed)) return `settings.json fails its schema: ${JSON.stringify(this.validate.errors)}`;
      this.document = parsed;
      return null;
    } catch (error) {
      return `settings.json is not valid JSON: ${String(error)}`;
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

  async update(change: Partial<Omit<SettingsDocument['model'], 'keyStorage'>> & { keyStorage?: KeyStorage }): Promise<void> {
    const next: SettingsDocument = { schemaVersion: 1, model: { ...this.document.model, ...change } };
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(next, null, 2)}\n`);
    } catch (error) {
      throw new WispError('STORAGE_FAILED', `could not write ${this.file}: ${(error as Error).message}`);
    }
    this.document = next;
  }
}
