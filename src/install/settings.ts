import { Type, type Static } from '@sinclair/typebox';
import { LIMITS, type InstallSettingsView } from '../core/index.js';
import { schemaCheck, type SettingsFile, type SettingsSection } from '../util/index.js';
import { DEFAULT_RUNTIME_DIRS } from './runtime.js';

/** Install settings: where Node and npm are looked for, the one registry, a CA bundle, the time limit (the wire's InstallSettingsView). */
export type InstallSettings = Readonly<InstallSettingsView>;
/** installs.setSettings: the fields to change; null takes registry and caFile back to the default. */
export type InstallSettingsChange = Partial<InstallSettingsView>;

/** The `installs` section of settings.json (optional: absent, the defaults apply). Persisted: additive changes only. */
const InstallsSection = Type.Object(
  {
    runtimeDirs: Type.Optional(Type.Array(Type.String({ pattern: '^/' }), { minItems: 1, maxItems: 16 })),
    registry: Type.Optional(Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()])),
    caFile: Type.Optional(Type.Union([Type.String({ pattern: '^/' }), Type.Null()])),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
  },
  { additionalProperties: false },
);
type InstallsSection = Static<typeof InstallsSection>;

/** The install settings, kept in the `installs` section of settings.json, over defaults. */
export class InstallSettingsStore {
  private readonly section: SettingsSection<InstallsSection>;
  private readonly defaults: InstallSettings;

  /** `runtimeDirs`: where Node and npm are looked for unless settings.json says otherwise (default: the fixed system list). */
  constructor(file: SettingsFile, runtimeDirs: readonly string[] = DEFAULT_RUNTIME_DIRS) {
    this.section = file.section({ key: 'installs', check: schemaCheck<InstallsSection>(InstallsSection, 'strict') });
    this.defaults = { runtimeDirs: [...runtimeDirs], registry: null, caFile: null, timeoutMs: LIMITS.installTimeoutMs };
  }

  get settings(): InstallSettings {
    const i = this.section.value ?? {};
    return {
      runtimeDirs: i.runtimeDirs ?? this.defaults.runtimeDirs,
      registry: i.registry !== undefined ? i.registry : this.defaults.registry,
      caFile: i.caFile !== undefined ? i.caFile : this.defaults.caFile,
      timeoutMs: i.timeoutMs ?? this.defaults.timeoutMs,
    };
  }

  /** The settings as installs.getSettings shows them. */
  get view(): InstallSettingsView {
    const settings = this.settings;
    return { ...settings, runtimeDirs: [...settings.runtimeDirs] };
  }

  update(change: InstallSettingsChange): Promise<void> {
    return this.section.update((current) => ({ ...current, ...change }));
  }
}
