import type { Result } from '../../core/index.js';
import { clean } from '../render.js';

/** The model API settings. */

type Settings = Result<'model.getSettings'>['settings'];

export function settingsText(settings: Settings): string {
  return Object.entries(settings)
    .map(([k, v]) => `${k.padEnd(19)} ${clean(String(v))}`)
    .join('\n');
}

export function settingsSavedText(settings: Settings): string {
  return `model settings saved: ${clean(settings.model)} at ${clean(settings.baseUrl)}`;
}

export function keySavedText(settings: Settings): string {
  return `API key saved (${clean(settings.key)})`;
}

/** After clear-key: where a key would come from now. */
export function keyClearedText(settings: Settings): string {
  return settings.key === 'environment' ? 'API key removed; the daemon\'s DEEPSEEK_API_KEY applies' : `API key removed (key now: ${clean(settings.key)})`;
}
