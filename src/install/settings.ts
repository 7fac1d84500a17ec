import { LIMITS, type InstallSettingsView } from '../core/index.js';
import type { SettingsFile, SettingsSection } from '../util/index.js';
import type { InstallsSection } from './settings-schema.js';
import { checks } from '#generated/install-settings-check.js';
import { DEFAULT_RUNTIME_DIRS } from './runtime.js';

/** Install settings: where Node and npm are looked for, the one registry, a CA bundle, the time limit, the sandbox (the wire's InstallSettingsView). */
export type InstallSettings = Readonly<InstallSettingsView>;
/** installs.setSettings: the fields to change; null takes registry and caFile back to the default. */
export type InstallSettingsChange = Partial<InstallSettingsView>;

/** The install settings, kept in the `installs` section of settings.json, over defaults. */
export class InstallSettingsStore {
  private readonly section: SettingsSection<InstallsSection>;
  private readonly defaults: InstallSettings;

  /** `runtimeDirs`: where Node and npm are looked for unless settings.json says otherwise (default: the fixed system list). */
  constructor(file: SettingsFile, runtimeDirs: readonly string[] = DEFAULT_RUNTIME_DIRS) {
    this.section = file.section({ key: 'installs', check: checks.installsSection });
    this.defaults = { runtimeDirs: [...runtimeDirs], registry: null, caFile: null, timeoutMs: LIMITS.installTimeoutMs, sandbox: true };
  }

  get settings(): InstallSettings {
    const i = this.section.value ?? {};
    return {
      runtimeDirs: i.runtimeDirs ?? this.defaults.runtimeDirs,
      registry: i.registry !== undefined ? i.registry : this.defaults.registry,
      caFile: i.caFile !== undefined ? i.caFile : this.defaults.caFile,
      timeoutMs: i.timeoutMs ?? this.defaults.timeoutMs,
      sandbox: i.sandbox ?? this.defaults.sandbox,
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
